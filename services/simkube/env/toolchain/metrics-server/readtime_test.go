package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/metrics-server/pkg/scraper/client"
	"sigs.k8s.io/metrics-server/pkg/scraper/client/resource"
)

// kubeletBody is a /metrics/resource exposition as the environment's KWOK Metric serves it,
// with the read-at gauge when readAt is non-empty (a real kubelet serves none).
func kubeletBody(readAt string) string {
	body := "# TYPE container_cpu_usage_seconds_total counter\n" +
		"container_cpu_usage_seconds_total{container=\"c\",namespace=\"ns\",pod=\"p\"} 12.5\n" +
		"# TYPE container_memory_working_set_bytes gauge\n" +
		"container_memory_working_set_bytes{container=\"c\",namespace=\"ns\",pod=\"p\"} 1000\n" +
		"# TYPE node_cpu_usage_seconds_total counter\nnode_cpu_usage_seconds_total 100\n" +
		"# TYPE node_memory_working_set_bytes gauge\nnode_memory_working_set_bytes 2000\n"
	if readAt != "" {
		body += "# TYPE " + readAtSeries + " gauge\n" + readAtSeries + " " + readAt + "\n"
	}
	return body
}

// scrape reads one node's metrics through upstream's kubelet client, wired as serving.go
// wires it, from a server answering body.
func scrape(t *testing.T, body string) (point time.Time, node time.Time, requested time.Time) {
	t.Helper()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, body)
	}))
	defer server.Close()
	address, _ := url.Parse(server.URL)
	port, _ := strconv.Atoi(address.Port())
	upstream, err := resource.NewForConfig(&client.KubeletClientConfig{
		Client:              rest.Config{WrapTransport: wrapReadAt},
		AddressTypePriority: []corev1.NodeAddressType{corev1.NodeInternalIP},
		Scheme:              "http", DefaultPort: port})
	if err != nil {
		t.Fatal(err)
	}
	kwokNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: address.Hostname()}}}}
	requested = time.Now()
	batch, err := readAtStamps{inner: upstream}.GetMetrics(context.Background(), kwokNode)
	if err != nil {
		t.Fatal(err)
	}
	container := batch.Pods[apitypes.NamespacedName{Namespace: "ns", Name: "p"}].Containers["c"]
	if container.CumulativeCPUUsed != 12_500_000_000 {
		t.Fatalf("the reading itself changed: %d", container.CumulativeCPUUsed)
	}
	return container.Timestamp, batch.Nodes["n"].Timestamp, requested
}

func TestReadingsCarryTheMomentKWOKTookThem(t *testing.T) {
	point, node, _ := scrape(t, kubeletBody("1.795712101123456e+09"))
	want := time.Unix(1795712101, 123456000)
	for _, got := range []time.Time{point, node} {
		if d := got.Sub(want); d < -time.Microsecond || d > time.Microsecond {
			t.Fatalf("stamped %v, want KWOK's %v", got, want)
		}
	}
}

func TestReadingsWithoutTheGaugeKeepMetricsServersStamp(t *testing.T) {
	for _, readAt := range []string{"", "NaN", "-1", "+Inf"} {
		point, _, requested := scrape(t, kubeletBody(readAt))
		// metrics-server's own stamp: the request's moment, in whole milliseconds
		if d := point.Sub(requested); d < -time.Millisecond || d > time.Second {
			t.Fatalf("gauge %q: stamped %v, request at %v", readAt, point, requested)
		}
	}
}

func TestFindReadAtReadsOnlyItsOwnSeries(t *testing.T) {
	if _, found := findReadAt([]byte("# HELP " + readAtSeries + " x\nother 5\n")); found {
		t.Fatal("found a value in a comment")
	}
	at, found := findReadAt([]byte(readAtSeries + " 1700000000.5\n"))
	if !found || !at.Equal(time.Unix(1700000000, 500000000)) {
		t.Fatalf("got %v %v", at, found)
	}
}
