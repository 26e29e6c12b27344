package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/transport"

	"sigs.k8s.io/metrics-server/pkg/scraper/client"
	"sigs.k8s.io/metrics-server/pkg/storage"
)

// readAtSeries is the gauge the environment's KWOK Metric serves beside the resource series:
// the moment (Unix seconds, sub-microsecond) KWOK evaluated them.
//
// Why: KWOK integrates a container's CPU counter up to the moment it evaluates it, and
// metrics-server stamps the reading with the moment it sent the request, in whole
// milliseconds. The rate metrics-server serves is the counter's difference over the stamps'
// difference, so the request's latency jitter and the millisecond rounding are an error of
// their size over the scrape interval: nothing at a source's 15 s, but about 1 % at the
// 0.2 s of wall time a replay scrapes at high speed. The HPA truncates utilization to a whole
// percent, so that noise alone flipped a recorded 60.9 % (6 replicas) to 61 % (7) in replays
// at 10x. Stamped with KWOK's own moment, every reading's rate is its usage to within
// microseconds. A kubelet does not serve the gauge, and its readings keep metrics-server's
// stamp.
const readAtSeries = "simkube_kwok_read_at_seconds"

type readAtKey struct{}

// readAt is where the transport leaves the moment it found in one response.
type readAt struct {
	at    time.Time
	found bool
}

// readAtTransport finds readAtSeries in a response for a request that asks for it (its
// context carries a *readAt) and gives the body back unread.
type readAtTransport struct {
	inner http.RoundTripper
}

func wrapReadAt(inner http.RoundTripper) http.RoundTripper {
	return readAtTransport{inner: inner}
}

var _ transport.WrapperFunc = wrapReadAt

func (t readAtTransport) RoundTrip(request *http.Request) (*http.Response, error) {
	response, err := t.inner.RoundTrip(request)
	holder, asked := request.Context().Value(readAtKey{}).(*readAt)
	if err != nil || !asked || response.StatusCode != http.StatusOK {
		return response, err
	}
	body, err := io.ReadAll(response.Body)
	response.Body.Close()
	if err != nil {
		return nil, err
	}
	response.Body = io.NopCloser(bytes.NewReader(body))
	holder.at, holder.found = findReadAt(body)
	return response, nil
}

// findReadAt reads readAtSeries's value from a Prometheus text exposition.
func findReadAt(body []byte) (time.Time, bool) {
	lines := bufio.NewScanner(bytes.NewReader(body))
	lines.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for lines.Scan() {
		line := lines.Text()
		if !strings.HasPrefix(line, readAtSeries) {
			continue
		}
		fields := strings.Fields(strings.TrimPrefix(line, readAtSeries))
		if len(fields) == 0 {
			return time.Time{}, false
		}
		seconds, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil || seconds <= 0 || math.IsInf(seconds, 0) || math.IsNaN(seconds) {
			return time.Time{}, false
		}
		whole, fraction := math.Modf(seconds)
		return time.Unix(int64(whole), int64(fraction*1e9)), true
	}
	return time.Time{}, false
}

// readAtStamps restamps each node's readings with the moment KWOK took them, where its
// response says; other responses pass as they are.
type readAtStamps struct {
	inner client.KubeletMetricsGetter
}

func (g readAtStamps) GetMetrics(ctx context.Context, node *corev1.Node) (*storage.MetricsBatch, error) {
	holder := &readAt{}
	batch, err := g.inner.GetMetrics(context.WithValue(ctx, readAtKey{}, holder), node)
	if err != nil || batch == nil || !holder.found {
		return batch, err
	}
	restamp(batch, holder.at)
	return batch, nil
}

func restamp(batch *storage.MetricsBatch, at time.Time) {
	for name, point := range batch.Nodes {
		point.Timestamp = at
		batch.Nodes[name] = point
	}
	for _, pod := range batch.Pods {
		for name, point := range pod.Containers {
			point.Timestamp = at
			pod.Containers[name] = point
		}
	}
}
