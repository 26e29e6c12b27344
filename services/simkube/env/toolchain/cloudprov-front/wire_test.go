package main

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func field(out []byte, number protowire.Number, value []byte) []byte {
	out = protowire.AppendTag(out, number, protowire.BytesType)
	return protowire.AppendBytes(out, value)
}

func mapEntry(key, value string) []byte {
	return field(field(nil, 1, []byte(key)), 2, []byte(value))
}

// nodeRequest encodes a NodeGroupForNodeRequest with the map entries in the order given.
func nodeRequest(providerID, name string, labels, annotations [][2]string) []byte {
	var node []byte
	if providerID != "" {
		node = field(node, nodeProviderID, []byte(providerID))
	}
	node = field(node, nodeName, []byte(name))
	for _, kv := range labels {
		node = field(node, nodeLabels, mapEntry(kv[0], kv[1]))
	}
	for _, kv := range annotations {
		node = field(node, nodeAnnotations, mapEntry(kv[0], kv[1]))
	}
	return field(nil, 1, node)
}

func TestNodeKeyDoesNotDependOnMapOrder(t *testing.T) {
	a := nodeRequest("simkube://n1", "n1", [][2]string{{"a", "1"}, {"b", "2"}, {"c", "3"}},
		[][2]string{{"x", "9"}, {"y", "8"}})
	b := nodeRequest("simkube://n1", "n1", [][2]string{{"c", "3"}, {"a", "1"}, {"b", "2"}},
		[][2]string{{"y", "8"}, {"x", "9"}})
	ka, okA := nodeRequestKey(a, nil)
	kb, okB := nodeRequestKey(b, nil)
	if !okA || !okB || ka != kb {
		t.Fatalf("keys differ or refused: %v %v", okA, okB)
	}
}

func TestNodeKeyTellsDifferentNodesApart(t *testing.T) {
	base := nodeRequest("simkube://n1", "n1", [][2]string{{"a", "1"}}, nil)
	for name, other := range map[string][]byte{
		"name":       nodeRequest("simkube://n1", "n2", [][2]string{{"a", "1"}}, nil),
		"providerID": nodeRequest("simkube://n2", "n1", [][2]string{{"a", "1"}}, nil),
		"label":      nodeRequest("simkube://n1", "n1", [][2]string{{"a", "2"}}, nil),
		// the same pair as a label and as an annotation are different requests
		"annotation": nodeRequest("simkube://n1", "n1", nil, [][2]string{{"a", "1"}}),
	} {
		k1, _ := nodeRequestKey(base, nil)
		k2, ok := nodeRequestKey(other, nil)
		if !ok || k1 == k2 {
			t.Errorf("%s: same key for different nodes", name)
		}
	}
}

func TestNodeKeyRefusesWhatOrderWouldDecide(t *testing.T) {
	duplicateLabel := nodeRequest("", "n1", [][2]string{{"a", "1"}, {"a", "2"}}, nil)
	node := field(field(nil, nodeName, []byte("n1")), nodeName, []byte("n2"))
	duplicateName := field(nil, 1, node)
	unknown := field(nil, 1, field(field(nil, nodeName, []byte("n1")), 9, []byte("?")))
	varint := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1)
	for name, request := range map[string][]byte{
		"duplicate label": duplicateLabel, "duplicate name": duplicateName,
		"unknown field": unknown, "wrong wire type": varint, "truncated": []byte{0x0a, 0x05},
	} {
		if _, ok := nodeRequestKey(request, nil); ok {
			t.Errorf("%s: cached", name)
		}
	}
}

func group(id string, min, max uint64, debug string) []byte {
	var g []byte
	if id != "" {
		g = field(g, 1, []byte(id))
	}
	g = protowire.AppendVarint(protowire.AppendTag(g, 2, protowire.VarintType), min)
	g = protowire.AppendVarint(protowire.AppendTag(g, 3, protowire.VarintType), max)
	g = field(g, 4, []byte(debug))
	return field(nil, 1, g)
}

func TestOnlyAnAnswerNamingAGroupIsKept(t *testing.T) {
	if !namesGroup(group("pool-0", 1, 10, "pool-0: m5")) {
		t.Error("an answer naming pool-0 was not kept")
	}
	for name, answer := range map[string][]byte{
		"no group": nil, "empty id": group("", 0, 0, ""), "empty message": field(nil, 1, nil),
		"truncated": []byte{0x0a, 0x09, 0x0a},
	} {
		if namesGroup(answer) {
			t.Errorf("%s: kept", name)
		}
	}
}

func TestWithKeyLabelsOnlyThoseLabelsAndNoAnnotationMakeTheKey(t *testing.T) {
	keyLabels := []string{"simkube.dev/node-group", "simkube.dev/node-group-namespace"}
	group := [][2]string{{"simkube.dev/node-group", "pool-0"}, {"simkube.dev/node-group-namespace", "sk"}}
	base := nodeRequest("simkube://n1", "n1", append(group, [2]string{"zone", "a"}),
		[][2]string{{"node.alpha.kubernetes.io/ttl", "30"}})
	churned := nodeRequest("simkube://n1", "n1", append(group, [2]string{"zone", "b"}),
		[][2]string{{"node.alpha.kubernetes.io/ttl", "60"}, {"new", "x"}})
	k1, ok1 := nodeRequestKey(base, keyLabels)
	k2, ok2 := nodeRequestKey(churned, keyLabels)
	if !ok1 || !ok2 || k1 != k2 {
		t.Fatal("a changed annotation or other label made a new key")
	}
	for name, other := range map[string][]byte{
		"group":    nodeRequest("simkube://n1", "n1", [][2]string{{"simkube.dev/node-group", "pool-1"}, {"simkube.dev/node-group-namespace", "sk"}}, nil),
		"owner":    nodeRequest("simkube://n1", "n1", [][2]string{{"simkube.dev/node-group", "pool-0"}}, nil),
		"name":     nodeRequest("simkube://n1", "n2", group, nil),
		"provider": nodeRequest("simkube://n2", "n1", group, nil),
	} {
		if k, ok := nodeRequestKey(other, keyLabels); !ok || k == k1 {
			t.Errorf("%s: same key as a different node", name)
		}
	}
	duplicate := nodeRequest("", "n1", [][2]string{{"zone", "a"}, {"zone", "b"}}, nil)
	if _, ok := nodeRequestKey(duplicate, keyLabels); ok {
		t.Error("a repeated label is uncached even when it is not a key label")
	}
}
