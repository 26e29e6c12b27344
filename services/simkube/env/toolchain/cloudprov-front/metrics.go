package main

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the front's Prometheus figures, labelled by the RPC's short name.
type metrics struct {
	hits          *prometheus.CounterVec
	misses        *prometheus.CounterVec
	forwards      *prometheus.CounterVec
	upstream      *prometheus.HistogramVec
	invalidations prometheus.Counter
}

func newMetrics(registry prometheus.Registerer, cache *answerCache) *metrics {
	m := &metrics{
		hits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sk_cloudprov_front_cache_hits_total",
			Help: "Calls answered from the cache.",
		}, []string{"method"}),
		misses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sk_cloudprov_front_cache_misses_total",
			Help: "Calls of a cached method whose answer was not in the cache (then forwarded).",
		}, []string{"method"}),
		forwards: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sk_cloudprov_front_forwards_total",
			Help: "Calls forwarded to sk-cloudprov, by the status code it answered.",
		}, []string{"method", "code"}),
		upstream: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sk_cloudprov_front_upstream_seconds",
			Help:    "Time of a forwarded call, as the front waited for sk-cloudprov.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5},
		}, []string{"method"}),
		invalidations: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sk_cloudprov_front_cache_invalidations_total",
			Help: "Times the cache was emptied because the connection to sk-cloudprov was lost.",
		}),
	}
	entries := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sk_cloudprov_front_cache_entries",
		Help: "Answers in the cache.",
	}, func() float64 { n, _ := cache.stats(); return float64(n) })
	size := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sk_cloudprov_front_cache_bytes",
		Help: "Bytes the cache's answers are counted at (bounded by --cache-bytes).",
	}, func() float64 { _, b := cache.stats(); return float64(b) })
	registry.MustRegister(m.hits, m.misses, m.forwards, m.upstream, m.invalidations, entries, size)
	return m
}
