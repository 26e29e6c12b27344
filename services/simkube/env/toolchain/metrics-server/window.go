package main

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/metrics/pkg/apis/metrics"

	"sigs.k8s.io/metrics-server/pkg/storage"
)

// The annotations sk-driver puts on a replayed pod whose workload has recorded usage (the
// gate), and on such a pod once the recorded cluster would have counted it (countable).
const (
	gateAnnotation      = "simkube.dev/usage-workload"
	countableAnnotation = "simkube.dev/usage-countable"
	// A window no reading can be a whole window past: the HPA counts the pod as idle.
	notYetWindow = time.Hour
)

// windowFloor decides the windows pod metrics report.
//
// Why: the HorizontalPodAutoscaler ignores a new pod's CPU (counts it as idle when scaling
// up) until its reading's timestamp is a whole window past the pod turning Ready. A recorded
// cluster's metrics-server served a new pod's first rate at its second scrape after the pod
// started (the first reading is stored, the next gives a rate), 15-30 s later at the usual
// 15 s. A replay scrapes every 2 s of trace time and serves that rate within seconds, so its
// HPA would count new pods far sooner and take scale steps the recording never took.
//
// A replayed pod of a workload with recorded usage carries gateAnnotation, and sk-driver adds
// countableAnnotation at the trace moment of the recorded cluster's second scrape after the
// pod turned Ready (the trace records when those scrapes were). Until then its readings
// report notYetWindow, after it their windows as measured: the HPA counts the pod in the
// same sync the recorded one did. Other pods report at least floor (--min-window), the
// average of that delay. Usages and timestamps are never changed; node metrics pass
// through (nothing reads their window).
type windowFloor struct {
	storage.Storage
	floor time.Duration
}

func withWindowFloor(inner storage.Storage, floor time.Duration) storage.Storage {
	return windowFloor{Storage: inner, floor: floor}
}

func (w windowFloor) GetPodMetrics(pods ...*metav1.PartialObjectMetadata) ([]metrics.PodMetrics, error) {
	served, err := w.Storage.GetPodMetrics(pods...)
	gated := make(map[string]bool, len(pods)) // namespace/name -> countable yet
	for _, pod := range pods {
		if _, ok := pod.Annotations[gateAnnotation]; ok {
			gated[pod.Namespace+"/"+pod.Name] = pod.Annotations[countableAnnotation] == "true"
		}
	}
	for i := range served {
		countable, isGated := gated[served[i].Namespace+"/"+served[i].Name]
		switch {
		case isGated && !countable:
			served[i].Window = metav1.Duration{Duration: notYetWindow}
		case isGated:
			// as measured
		case served[i].Window.Duration < w.floor:
			served[i].Window = metav1.Duration{Duration: w.floor}
		}
	}
	return served, err
}
