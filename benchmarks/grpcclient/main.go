// Command grpcclient replays Cluster Autoscaler's serial call pattern against externalgrpc
// servers, the way CA's Go client makes it: one unary call at a time over one grpc-go
// connection, each with its own deadline. It is a benchmark helper of benchmarks/cloudprov_rpc.py
// (which writes the requests and reads the result); it knows no proto schema: each request is
// already-encoded bytes sent with a pass-through codec, so no generated code is needed.
//
// Input (-requests): records of [u16 method length][method][u32 payload length][payload], one
// "loop" of CA's calls. Every -target gets -loops loops, interleaved loop by loop (A, B, A, B...),
// so each target sees the same machine load. Output: one JSON object per target and method on
// stdout with per-call percentiles and the serial call rate.
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
)

type raw struct{}

func (raw) Name() string { return "proto" }

func (raw) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }

func (raw) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append((*(v.(*[]byte)))[:0], data...)
	return nil
}

// serveEmpty answers every unary call with an empty message (for NodeGroupForNode "no group",
// for NodeGroupGetOptions "CA's defaults"): the cost of a round trip to a native server.
func serveEmpty(address string) error {
	listener, err := net.Listen("tcp", address)
	if err != nil {
		return err
	}
	server := grpc.NewServer(grpc.ForceServerCodec(raw{}),
		grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
			var in, out []byte
			if err := stream.RecvMsg(&in); err != nil {
				return err
			}
			return stream.SendMsg(&out)
		}))
	fmt.Println("serving")
	return server.Serve(listener)
}

type call struct {
	method  string
	payload []byte
}

func readCalls(path string) ([]call, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var calls []call
	for len(data) > 0 {
		if len(data) < 2 {
			return nil, fmt.Errorf("%s: truncated record", path)
		}
		n := int(binary.BigEndian.Uint16(data))
		data = data[2:]
		if len(data) < n+4 {
			return nil, fmt.Errorf("%s: truncated record", path)
		}
		method := string(data[:n])
		data = data[n:]
		m := int(binary.BigEndian.Uint32(data))
		data = data[4:]
		if len(data) < m {
			return nil, fmt.Errorf("%s: truncated payload", path)
		}
		calls = append(calls, call{method: method, payload: data[:m]})
		data = data[m:]
	}
	return calls, nil
}

type result struct {
	Target    string  `json:"target"`
	Method    string  `json:"method"`
	Calls     int     `json:"calls"`
	Errors    int     `json:"errors"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	PerSecond float64 `json:"calls_per_second"`
	LoopMsP50 float64 `json:"loop_ms_p50"`
}

func quantile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return float64(sorted[i].Microseconds()) / 1000
}

func main() {
	targets := flag.String("targets", "", "comma-separated label=address (grpc-go targets, e.g. unix:///tmp/s.sock)")
	requests := flag.String("requests", "", "file of encoded calls: one loop")
	loops := flag.Int("loops", 5, "loops per target")
	timeout := flag.Duration("timeout", 10*time.Second, "deadline of each call (CA's grpc_timeout)")
	serve := flag.String("serve", "", "instead: serve every method with an empty answer on this address")
	flag.Parse()
	if *serve != "" {
		if err := serveEmpty(*serve); err != nil {
			fmt.Fprintln(os.Stderr, "grpcclient:", err)
			os.Exit(1)
		}
		return
	}
	calls, err := readCalls(*requests)
	if err != nil || *targets == "" {
		fmt.Fprintln(os.Stderr, "grpcclient:", err, "(-targets and -requests are required)")
		os.Exit(2)
	}
	encoding.RegisterCodec(raw{})
	type conn struct {
		label, address string
		cc             *grpc.ClientConn
		samples        map[string][]time.Duration
		errors         map[string]int
		loopTimes      []time.Duration
	}
	var conns []*conn
	for _, spec := range strings.Split(*targets, ",") {
		label, address, ok := strings.Cut(spec, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "grpcclient: target %q is not label=address\n", spec)
			os.Exit(2)
		}
		cc, err := grpc.Dial(address, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			fmt.Fprintln(os.Stderr, "grpcclient:", err)
			os.Exit(1)
		}
		defer cc.Close()
		conns = append(conns, &conn{label: label, address: address, cc: cc,
			samples: map[string][]time.Duration{}, errors: map[string]int{}})
	}
	var out []byte
	run := func(c *conn, record bool) {
		loopStart := time.Now()
		for _, k := range calls {
			ctx, cancel := context.WithTimeout(context.Background(), *timeout)
			in := k.payload
			started := time.Now()
			err := c.cc.Invoke(ctx, k.method, &in, &out)
			elapsed := time.Since(started)
			cancel()
			if !record {
				continue
			}
			short := k.method[strings.LastIndex(k.method, "/")+1:]
			c.samples[short] = append(c.samples[short], elapsed)
			if err != nil {
				if s, _ := status.FromError(err); s.Code().String() != "Unimplemented" {
					if c.errors[short] == 0 {
						fmt.Fprintf(os.Stderr, "grpcclient: %s %s: %v\n", c.label, short, err)
					}
					c.errors[short]++
				}
			}
		}
		if record {
			c.loopTimes = append(c.loopTimes, time.Since(loopStart))
		}
	}
	for _, c := range conns { // warm-up loop, not recorded
		run(c, false)
	}
	for i := 0; i < *loops; i++ {
		for _, c := range conns {
			run(c, true)
		}
	}
	encoder := json.NewEncoder(os.Stdout)
	for _, c := range conns {
		sort.Slice(c.loopTimes, func(i, j int) bool { return c.loopTimes[i] < c.loopTimes[j] })
		loopP50 := quantile(c.loopTimes, 0.5)
		methods := make([]string, 0, len(c.samples))
		var all []time.Duration
		for m, s := range c.samples {
			methods = append(methods, m)
			all = append(all, s...)
		}
		sort.Strings(methods)
		c.samples["*"] = all
		methods = append(methods, "*")
		for _, m := range methods {
			s := c.samples[m]
			var total time.Duration
			for _, d := range s {
				total += d
			}
			sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
			if err := encoder.Encode(result{Target: c.label, Method: m, Calls: len(s),
				Errors: c.errors[m], P50Ms: quantile(s, 0.5), P99Ms: quantile(s, 0.99),
				PerSecond: float64(len(s)) / total.Seconds(), LoopMsP50: loopP50}); err != nil {
				fmt.Fprintln(os.Stderr, "grpcclient:", err)
				os.Exit(1)
			}
		}
	}
}
