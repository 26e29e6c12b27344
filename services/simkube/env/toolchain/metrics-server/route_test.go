package main

import (
	"net/http"
	"testing"
	"time"

	"sigs.k8s.io/metrics-server/cmd/metrics-server/app/options"
)

func TestRoutedSendsKubeletRequestsToKwokByNodeName(t *testing.T) {
	request, _ := http.NewRequest(http.MethodGet, "http://node-a.zone-1:10250/metrics/resource", nil)
	out := routed(request, "127.0.0.1:4321")
	if out.URL.Host != "127.0.0.1:4321" || out.Host != "127.0.0.1:4321" {
		t.Fatalf("host not routed: %v", out.URL)
	}
	if got := nodeOf(out.URL.Path); got != "node-a.zone-1" {
		t.Fatalf("node = %q, path %q", got, out.URL.Path)
	}
	if request.URL.Host != "node-a.zone-1:10250" {
		t.Fatalf("the original request was changed: %v", request.URL)
	}
}

func TestRoutedLeavesOtherPathsAlone(t *testing.T) {
	request, _ := http.NewRequest(http.MethodGet, "http://node-a:10250/metrics/nodes/x/metrics/resource", nil)
	if out := routed(request, "127.0.0.1:1"); out != request {
		t.Fatalf("an annotated path was rerouted: %v", out.URL)
	}
}

func TestValidateAcceptsResolutionsBelowUpstreamFloor(t *testing.T) {
	opts := options.NewOptions()
	opts.MetricResolution = 1500 * time.Millisecond
	opts.KubeletClient.KubeletRequestTimeout = time.Second
	if err := validate(opts); err != nil {
		t.Fatalf("1.5 s refused: %v", err)
	}
	if opts.MetricResolution != 1500*time.Millisecond {
		t.Fatalf("resolution not restored: %v", opts.MetricResolution)
	}
}

func TestValidateRefusesTimeoutLongerThanResolution(t *testing.T) {
	opts := options.NewOptions()
	opts.MetricResolution = 2 * time.Second
	opts.KubeletClient.KubeletRequestTimeout = 2 * time.Second
	if err := validate(opts); err == nil {
		t.Fatal("a 2 s timeout with a 2 s resolution was accepted")
	}
	opts.MetricResolution = 0
	if err := validate(opts); err == nil {
		t.Fatal("a zero resolution was accepted")
	}
}
