package main

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/metrics/pkg/apis/metrics"

	"sigs.k8s.io/metrics-server/pkg/storage"
)

// served is a storage that serves fixed pod metrics: only the floor's arithmetic is tested.
type served struct {
	storage.Storage
	pods []metrics.PodMetrics
}

func (s served) GetPodMetrics(...*metav1.PartialObjectMetadata) ([]metrics.PodMetrics, error) {
	return s.pods, nil
}

func (s served) GetNodeMetrics(...*corev1.Node) ([]metrics.NodeMetrics, error) {
	return nil, nil
}

func windowed(name string, window time.Duration) metrics.PodMetrics {
	return metrics.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: name},
		Timestamp: metav1.NewTime(time.Unix(100, 0)), Window: metav1.Duration{Duration: window}}
}

func TestWindowFloorRaisesShortWindowsOnly(t *testing.T) {
	inner := served{pods: []metrics.PodMetrics{windowed("short", 2*time.Second),
		windowed("long", 20*time.Second)}}
	out, err := withWindowFloor(inner, 15*time.Second).GetPodMetrics()
	if err != nil {
		t.Fatal(err)
	}
	if got := out[0].Window.Duration; got != 15*time.Second {
		t.Fatalf("short window served as %v, want the floor", got)
	}
	if got := out[1].Window.Duration; got != 20*time.Second {
		t.Fatalf("long window served as %v, want it unchanged", got)
	}
	if !out[0].Timestamp.Equal(&metav1.Time{Time: time.Unix(100, 0)}) {
		t.Fatalf("timestamp changed: %v", out[0].Timestamp)
	}
}

func gatedPod(name string, annotations map[string]string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns",
		Name: name, Annotations: annotations}}
}

func TestAGatedPodIsCountedOnlyOnceMarkedCountable(t *testing.T) {
	inner := served{pods: []metrics.PodMetrics{windowed("waiting", 2*time.Second),
		windowed("counted", 2*time.Second), windowed("other", 2*time.Second)}}
	for i := range inner.pods {
		inner.pods[i].Namespace = "ns"
	}
	out, err := withWindowFloor(inner, 15*time.Second).GetPodMetrics(
		gatedPod("waiting", map[string]string{gateAnnotation: "w"}),
		gatedPod("counted", map[string]string{gateAnnotation: "w", countableAnnotation: "true"}),
		gatedPod("other", nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{notYetWindow, 2 * time.Second, 15 * time.Second}
	for i, window := range want {
		if got := out[i].Window.Duration; got != window {
			t.Fatalf("%s served a %v window, want %v", out[i].Name, got, window)
		}
	}
}

func TestZeroFloorReportsUngatedWindowsAsMeasured(t *testing.T) {
	inner := served{pods: []metrics.PodMetrics{windowed("p", 2*time.Second)}}
	out, _ := withWindowFloor(inner, 0).GetPodMetrics()
	if got := out[0].Window.Duration; got != 2*time.Second {
		t.Fatalf("window %v, want as measured", got)
	}
}
