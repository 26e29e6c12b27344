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

func TestZeroFloorIsTheStorageItself(t *testing.T) {
	inner := &served{}
	if got := withWindowFloor(inner, 0); got != storage.Storage(inner) {
		t.Fatalf("a zero floor wrapped the storage: %T", got)
	}
}
