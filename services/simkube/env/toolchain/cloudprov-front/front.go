package main

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// front answers the CloudProvider service: from the cache where a rule allows it, else by
// forwarding the call unchanged to sk-cloudprov.
type front struct {
	upstream *grpc.ClientConn
	rules    map[string]rule
	cache    *answerCache
	metrics  *metrics
	log      *slog.Logger
}

// shortName is the RPC's name without its service, for metric labels.
func shortName(method string) string {
	return method[strings.LastIndex(method, "/")+1:]
}

// handle serves one unary call of any method; registered as the server's handler for
// services it does not otherwise know.
func (f *front) handle(_ any, stream grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(stream)
	if !ok {
		return status.Error(codes.Internal, "cloudprov front: a call without a method name")
	}
	var request []byte
	if err := stream.RecvMsg(&request); err != nil {
		return err
	}
	answer, err := f.answer(stream.Context(), method, request)
	if err != nil {
		return err
	}
	return stream.SendMsg(&answer)
}

// answer is the cached answer to request, or upstream's, kept when its rule allows.
func (f *front) answer(ctx context.Context, method string, request []byte) ([]byte, error) {
	name := shortName(method)
	rule, cached := f.rules[method]
	key := ""
	if cached {
		if k, ok := rule.key(request); ok {
			key = method + "\x00" + k
		} else {
			cached = false
		}
	}
	if cached {
		if answer, ok := f.cache.get(key); ok {
			f.metrics.hits.WithLabelValues(name).Inc()
			return answer, nil
		}
		f.metrics.misses.WithLabelValues(name).Inc()
	}
	generation := f.cache.current()
	answer, err := f.forward(ctx, method, request)
	if err == nil && cached && rule.keep(answer) {
		f.cache.put(key, answer, generation)
	}
	return answer, err
}

// forward makes the same call upstream under the caller's context (so its deadline and
// cancellation), and returns upstream's answer or status as it is.
func (f *front) forward(ctx context.Context, method string, request []byte) ([]byte, error) {
	var answer []byte
	start := time.Now()
	err := f.upstream.Invoke(ctx, method, &request, &answer)
	name := shortName(method)
	f.metrics.upstream.WithLabelValues(name).Observe(time.Since(start).Seconds())
	f.metrics.forwards.WithLabelValues(name, status.Code(err).String()).Inc()
	if err != nil {
		f.log.Debug("upstream refused", "method", name, "code", status.Code(err).String(),
			"error", status.Convert(err).Message())
		return nil, err
	}
	return answer, nil
}
