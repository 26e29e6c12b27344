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
// up) until its reading's timestamp is a whole window past the pod turning Ready. A recorded
// cluster's metrics-server served a new pod's first rate one to two of its resolutions after
// the pod started (its first reading is stored, the next gives a rate), 15-30 s at the usual
// 15 s. A replay scrapes every 2 s of trace time and serves that rate within seconds, so its
// HPA would count new pods far sooner and take scale steps the recording never took. The
// floor delays when the HPA counts a new pod without touching what it reads: usages and
// timestamps are still the fast scrapes'. Node metrics pass through (nothing reads their
// window).
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
