package main

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	apimetrics "k8s.io/apiserver/pkg/endpoints/metrics"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/transport"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	_ "k8s.io/component-base/metrics/prometheus/restclient" // client-go's request metrics

	"sigs.k8s.io/metrics-server/pkg/api"
	"sigs.k8s.io/metrics-server/pkg/scraper"
	"sigs.k8s.io/metrics-server/pkg/scraper/client/resource"
	msserver "sigs.k8s.io/metrics-server/pkg/server"
	"sigs.k8s.io/metrics-server/pkg/storage"
)

// runner is metrics-server's server: its type is unexported upstream.
type runner interface {
	RunUntil(stopCh <-chan struct{}) error
}

// assemble wires metrics-server's exported parts into its server, as its own Config.Complete
// does, with two differences: the storage the API serves from is wrapped (withWindowFloor),
// and readings are stamped with KWOK's moment of reading where it serves one (readtime.go).
// Complete builds its storage and kubelet client internally, so there is no other place to
// put either.
func assemble(config *msserver.Config, minWindow time.Duration) (runner, error) {
	metadataClient, err := metadata.NewForConfig(config.Rest)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	// The API lists only running pods' metadata, so it watches only those.
	podFactory := metadatainformer.NewFilteredSharedInformerFactory(metadataClient, 0,
		corev1.NamespaceAll, func(options *metav1.ListOptions) {
			options.FieldSelector = "status.phase=Running"
		})
	pods := podFactory.ForResource(corev1.SchemeGroupVersion.WithResource("pods"))
	clientset, err := kubernetes.NewForConfig(config.Rest)
	if err != nil {
		return nil, fmt.Errorf("node client: %w", err)
	}
	nodes := informers.NewSharedInformerFactory(clientset, 0).Core().V1().Nodes()
	// KWOK's moment of reading replaces metrics-server's request time (readtime.go).
	config.Kubelet.Client.WrapTransport = transport.Wrappers(config.Kubelet.Client.WrapTransport,
		wrapReadAt)
	upstream, err := resource.NewForConfig(config.Kubelet)
	if err != nil {
		return nil, fmt.Errorf("kubelet client: %w", err)
	}
	kubelets := readAtStamps{inner: upstream}
	var selector []labels.Requirement
	if text := strings.TrimSpace(config.NodeSelector); text != "" {
		if selector, err = labels.ParseToRequirements(text); err != nil {
			return nil, err
		}
	}
	scrape := scraper.NewScraper(nodes.Lister(), kubelets, config.ScrapeTimeout, selector)

	handler, err := metricsHandler(config.MetricResolution)
	if err != nil {
		return nil, err
	}
	config.Apiserver.EnableMetrics = false // served by handler: both registries
	generic, err := config.Apiserver.Complete(nil).New("metrics-server",
		genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	generic.Handler.NonGoRestfulMux.HandleFunc("/metrics", handler)

	store := withWindowFloor(storage.NewStorage(config.MetricResolution), minWindow)
	if err := api.Install(store, pods.Lister(), nodes.Lister(), generic, selector); err != nil {
		return nil, err
	}
	server := msserver.NewServer(nodes.Informer(), pods.Informer(), generic, store, scrape,
		config.MetricResolution)
	if err := server.RegisterProbes(podFactory); err != nil {
		return nil, err
	}
	return server, nil
}

// metricsHandler serves metrics-server's own metrics and the API server's legacy ones.
func metricsHandler(resolution time.Duration) (http.HandlerFunc, error) {
	registry := metrics.NewKubeRegistry()
	if err := msserver.RegisterMetrics(registry, resolution); err != nil {
		return nil, err
	}
	apimetrics.Register()
	own := metrics.HandlerFor(registry, metrics.HandlerOpts{})
	return func(w http.ResponseWriter, request *http.Request) {
		legacyregistry.Handler().ServeHTTP(w, request)
		own.ServeHTTP(w, request)
	}, nil
}
