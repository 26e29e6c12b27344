// Command metrics-server runs sigs.k8s.io/metrics-server's server, built from its packages, with
// changes a simulated cluster needs and its own command refuses:
//
//   - --metric-resolution below 10 s. A replay at speed s divides every controller's timers
//     by s, the HPA's 15 s sync period included; a scrape every 10 s of wall time would then be
//     10·s seconds of trace time, far staler than what the recorded cluster's HPA read.
//     Upstream's options validation refuses anything under 10 s, so it runs here with the
//     floor in place and the wanted resolution is checked by the same rule it applies to
//     the kubelet request timeout (resolution·0.9 >= timeout), then put back.
//   - --kwok-address. KWOK's fake kubelets are one HTTP server serving every node's
//     /metrics/resource under /metrics/nodes/NAME/metrics/resource. Rather than annotate every
//     node (Karpenter and Cluster Autoscaler create nodes this project does not write),
//     requests are routed there by node name (see route.go).
//   - --min-window. The shortest window a pod's metrics report (window.go says why a replay
//     needs it); 0, the default, reports windows as measured. A replayed pod that sk-driver
//     gates (its annotations) reports a window that keeps the HPA from counting it until the
//     recorded cluster would have, whatever the floor.
//   - readings stamped with the moment KWOK took them (readtime.go).
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/logs"

	"sigs.k8s.io/metrics-server/cmd/metrics-server/app/options"
)

// upstreamFloor is the smallest --metric-resolution metrics-server's own validation accepts.
const upstreamFloor = 10 * time.Second

func main() {
	logs.InitLogs()
	defer logs.FlushLogs()
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "metrics-server: %v\n", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	opts := options.NewOptions()
	fs := pflag.NewFlagSet("metrics-server", pflag.ContinueOnError)
	for _, set := range opts.Flags().FlagSets {
		fs.AddFlagSet(set)
	}
	kwokAddress := fs.String("kwok-address", "",
		"host:port of KWOK's server; kubelet requests go to its per-node metrics paths")
	minWindow := fs.Duration("min-window", 0,
		"the shortest window pod metrics report (0: as measured); see window.go")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := validate(opts); err != nil {
		return err
	}
	if *minWindow < 0 {
		return fmt.Errorf("--min-window must not be negative, got %v", *minWindow)
	}
	config, err := opts.ServerConfig()
	if err != nil {
		return err
	}
	if *kwokAddress != "" {
		config.Kubelet.Client.WrapTransport = kwokRoute(*kwokAddress)
	}
	server, err := assemble(config, *minWindow)
	if err != nil {
		return err
	}
	return server.RunUntil(genericapiserver.SetupSignalHandler())
}

// validate applies upstream's validation with the resolution raised to its floor, then the
// part of it that concerns the resolution to the value actually wanted.
func validate(opts *options.Options) error {
	wanted := opts.MetricResolution
	if wanted <= 0 {
		return fmt.Errorf("--metric-resolution must be positive, got %v", wanted)
	}
	if wanted < upstreamFloor {
		opts.MetricResolution = upstreamFloor
	}
	errs := opts.Validate()
	opts.MetricResolution = wanted
	if len(errs) > 0 {
		return errs[0]
	}
	if timeout := opts.KubeletClient.KubeletRequestTimeout; wanted*9/10 < timeout {
		return fmt.Errorf("--metric-resolution %v must exceed --kubelet-request-timeout %v "+
			"by a tenth at least", wanted, timeout)
	}
	return nil
}
