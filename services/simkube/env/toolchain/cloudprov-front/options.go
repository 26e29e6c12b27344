package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
)

type options struct {
	listen, upstream, metricsListen, logLevel string
	cacheBytes                                int
	keyLabels                                 []string // nil: key nodes by every field
}

func parseOptions(args []string) (options, error) {
	var o options
	flags := flag.NewFlagSet("sk-cloudprov-front", flag.ContinueOnError)
	flags.StringVar(&o.listen, "listen", "127.0.0.1:8087", "gRPC address CA connects to (host:port, or unix:///path)")
	flags.StringVar(&o.upstream, "upstream", "", "sk-cloudprov's gRPC address (host:port, required)")
	flags.StringVar(&o.metricsListen, "metrics-listen", "", "Prometheus /metrics address (off unless given)")
	flags.IntVar(&o.cacheBytes, "cache-bytes", 64<<20, "bound of the answer cache, in bytes")
	flags.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	flags.Func("node-key-labels", "the only node labels sk-cloudprov's NodeGroupForNode reads, "+
		"comma-separated: key nodes by providerID, name and these (default: the whole node)",
		func(value string) error {
			o.keyLabels = []string{}
			for _, label := range strings.Split(value, ",") {
				if label = strings.TrimSpace(label); label == "" {
					return errors.New("an empty label name")
				}
				o.keyLabels = append(o.keyLabels, label)
			}
			return nil
		})
	if err := flags.Parse(args); err != nil {
		return o, err
	}
	if flags.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", flags.Args())
	}
	if o.upstream == "" {
		return o, errors.New("--upstream is required (sk-cloudprov's host:port)")
	}
	addresses := map[string]string{"--upstream": o.upstream, "--metrics-listen": o.metricsListen}
	if path, ok := strings.CutPrefix(o.listen, unixScheme); !ok {
		addresses["--listen"] = o.listen
	} else if path == "" {
		return o, fmt.Errorf("--listen %q names no socket path", o.listen)
	}
	for name, address := range addresses {
		if _, _, err := net.SplitHostPort(address); address != "" && err != nil {
			return o, fmt.Errorf("%s %q is not host:port: %v", name, address, err)
		}
	}
	if o.cacheBytes < 1<<20 {
		return o, fmt.Errorf("--cache-bytes %d is below the least useful bound, 1048576", o.cacheBytes)
	}
	return o, nil
}

// unixScheme is how CA's cloud-config (grpc-go's target syntax) names a unix socket.
const unixScheme = "unix://"

// listen opens address: a unix socket for unix:///path (a stale socket file is replaced),
// else TCP.
func listen(address string) (net.Listener, error) {
	if path, ok := strings.CutPrefix(address, unixScheme); ok {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return net.Listen("unix", path)
	}
	return net.Listen("tcp", address)
}
