// Command sk-cloudprov-front stands between Cluster Autoscaler and sk-cloudprov, serving the
// externalgrpc CloudProvider service on a grpc-go server.
//
// CA 1.36.1's externalgrpc client makes about three serial calls per node in every loop
// (NodeGroupForNode once, its cache cleared by every Refresh; NodeGroupGetOptions twice),
// and a round trip through Python's gRPC costs ~0.6 ms where a native one costs ~0.14 ms:
// at 1,000 nodes that is most of CA's loop (docs/benchmarks.md). The front answers those
// whose answer sk-cloudprov derives from the request and its configuration alone from an
// in-memory cache, and forwards everything else unchanged, with the caller's deadline,
// returning sk-cloudprov's status as it is. docs/cloudprov.md says which and why.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// shutdownGrace is how long in-flight calls may take after SIGTERM before they are cut.
const shutdownGrace = 10 * time.Second

func logger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %v", level, err)
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	var log *slog.Logger
	if err == nil {
		log, err = logger(o.logLevel)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "sk-cloudprov-front: %v\n", err)
		os.Exit(2)
	}
	if err := run(o, log); err != nil {
		log.Error("stopped", "error", err.Error())
		os.Exit(1)
	}
}

func run(o options, log *slog.Logger) error {
	conn, err := grpc.NewClient(o.upstream,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(codec{})))
	if err != nil {
		return fmt.Errorf("upstream %s: %w", o.upstream, err)
	}
	defer conn.Close()
	listener, err := listen(o.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.listen, err)
	}
	registry := prometheus.NewRegistry()
	cache := newAnswerCache(o.cacheBytes)
	f := &front{upstream: conn, rules: rulesFor(o.keyLabels), cache: cache, metrics: newMetrics(registry, cache), log: log}
	server := grpc.NewServer(grpc.ForceServerCodec(codec{}),
		grpc.UnknownServiceHandler(f.handle))
	checks := health.NewServer()
	healthpb.RegisterHealthServer(server, checks)
	checks.SetServingStatus(Service, healthpb.HealthCheckResponse_SERVING)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	conn.Connect()
	go watchUpstream(ctx, conn, cache, f.metrics, log)
	var metricsServer *http.Server
	if o.metricsListen != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
		metricsServer = &http.Server{Addr: o.metricsListen, Handler: mux,
			ReadHeaderTimeout: 10 * time.Second}
		metricsListener, err := net.Listen("tcp", o.metricsListen)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", o.metricsListen, err)
		}
		go func() { _ = metricsServer.Serve(metricsListener) }()
	}
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	log.Info("serving", "listen", listener.Addr().String(), "upstream", o.upstream,
		"metrics", o.metricsListen, "cache_bytes", o.cacheBytes)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("stopping: letting calls in flight finish")
	checks.Shutdown()
	stopped := make(chan struct{})
	go func() { server.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(shutdownGrace):
		server.Stop()
	}
	if metricsServer != nil {
		shutdown, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = metricsServer.Shutdown(shutdown)
	}
	log.Info("stopped")
	return nil
}
