package main

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/metrics/pkg/apis/metrics"

	"sigs.k8s.io/metrics-server/pkg/storage"
)

// windowFloor serves pod metrics whose windows are at least floor long.
//
// Why: the HorizontalPodAutoscaler ignores a new pod's CPU (counts it as idle when scaling
// up) until a whole metric window has passed since the pod turned Ready. A replay scrapes
// KWOK every 2 s of trace time, so its windows are 2 s and its HPA counts a new pod about
// 15 s sooner than the recorded cluster's did, whose windows were its metrics-server's
// resolution (15 s in most clusters): it then takes scale steps the recording never took.
// The floor keeps the fresh readings of the fast scrapes and gives the HPA the recorded
// cluster's window. Only the reported window changes; the usage is still the rate over the
// scrape that measured it. Node metrics pass through unchanged (nothing reads their window).
type windowFloor struct {
	storage.Storage
	floor time.Duration
}

func withWindowFloor(inner storage.Storage, floor time.Duration) storage.Storage {
	if floor <= 0 {
		return inner
	}
	return windowFloor{Storage: inner, floor: floor}
}

func (w windowFloor) GetPodMetrics(pods ...*metav1.PartialObjectMetadata) ([]metrics.PodMetrics, error) {
	served, err := w.Storage.GetPodMetrics(pods...)
	for i := range served {
		if served[i].Window.Duration < w.floor {
			served[i].Window = metav1.Duration{Duration: w.floor}
		}
	}
	return served, err
}
