package main

import "testing"

func TestOptionsAreKeptOnlyWhenEmpty(t *testing.T) {
	rules := rulesFor(nil)
	options := rules["/"+Service+"/NodeGroupGetOptions"]
	if !options.keep(nil) || options.keep([]byte{0x0a, 0x00}) {
		t.Error("NodeGroupGetOptions keeps exactly the empty answer")
	}
	for _, method := range []string{"NodeGroups", "NodeGroupTargetSize", "NodeGroupNodes",
		"NodeGroupIncreaseSize", "NodeGroupDeleteNodes", "NodeGroupDecreaseTargetSize",
		"Refresh", "Cleanup", "PricingNodePrice", "PricingPodPrice"} {
		if _, cached := rules["/"+Service+"/"+method]; cached {
			t.Errorf("%s must always be forwarded", method)
		}
	}
}
