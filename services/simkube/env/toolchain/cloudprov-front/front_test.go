package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// upstream is a grpc-go server standing in for sk-cloudprov: it answers each method from
// answers (or with errors), counts calls and remembers the deadline each call came with.
type upstream struct {
	mu        sync.Mutex
	answers   map[string][]byte
	errors    map[string]error
	calls     map[string]int
	deadlines map[string]time.Duration
	server    *grpc.Server
	address   string
}

func startUpstream(t *testing.T, address string, answers map[string][]byte,
	errs map[string]error) *upstream {
	t.Helper()
	u := &upstream{answers: answers, errors: errs, calls: map[string]int{},
		deadlines: map[string]time.Duration{}}
	listener, err := net.Listen("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	u.address = listener.Addr().String()
	u.server = grpc.NewServer(grpc.ForceServerCodec(codec{}),
		grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
			method, _ := grpc.MethodFromServerStream(stream)
			var request []byte
			if err := stream.RecvMsg(&request); err != nil {
				return err
			}
			u.mu.Lock()
			u.calls[shortName(method)]++
			if deadline, ok := stream.Context().Deadline(); ok {
				u.deadlines[shortName(method)] = time.Until(deadline)
			}
			answer, err := u.answers[shortName(method)], u.errors[shortName(method)]
			u.mu.Unlock()
			if err != nil {
				return err
			}
			return stream.SendMsg(&answer)
		}))
	go func() { _ = u.server.Serve(listener) }()
	t.Cleanup(u.server.Stop)
	return u
}

func (u *upstream) count(method string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[method]
}

// startFront serves a front for upstream on loopback; a client connection to it.
func startFront(t *testing.T, upstreamAddress string) (*grpc.ClientConn, *answerCache) {
	t.Helper()
	conn, err := grpc.NewClient(upstreamAddress,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(codec{})))
	if err != nil {
		t.Fatal(err)
	}
	cache := newAnswerCache(1 << 20)
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	f := &front{upstream: conn, rules: rulesFor(nil), cache: cache, log: log,
		metrics: newMetrics(prometheus.NewRegistry(), cache)}
	ctx, cancel := context.WithCancel(context.Background())
	conn.Connect()
	go watchUpstream(ctx, conn, cache, f.metrics, log)
	server := grpc.NewServer(grpc.ForceServerCodec(codec{}), grpc.UnknownServiceHandler(f.handle))
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = server.Serve(listener) }()
	client, err := grpc.NewClient(listener.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(codec{})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close(); server.Stop(); cancel(); _ = conn.Close() })
	return client, cache
}

func call(t *testing.T, client *grpc.ClientConn, method string, request []byte) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var answer []byte
	err := client.Invoke(ctx, "/"+Service+"/"+method, &request, &answer)
	return answer, err
}

func TestCachedMethodIsAskedUpstreamOnce(t *testing.T) {
	answer := group("pool-0", 1, 10, "pool-0: m5")
	up := startUpstream(t, "127.0.0.1:0", map[string][]byte{"NodeGroupForNode": answer}, nil)
	client, _ := startFront(t, up.address)
	request := nodeRequest("simkube://n1", "n1", [][2]string{{"a", "1"}, {"b", "2"}}, nil)
	reordered := nodeRequest("simkube://n1", "n1", [][2]string{{"b", "2"}, {"a", "1"}}, nil)
	for _, r := range [][]byte{request, request, reordered} {
		got, err := call(t, client, "NodeGroupForNode", r)
		if err != nil || string(got) != string(answer) {
			t.Fatalf("answer %x, %v; want %x", got, err, answer)
		}
	}
	if n := up.count("NodeGroupForNode"); n != 1 {
		t.Fatalf("upstream asked %d times, want 1", n)
	}
}

func TestEmptyNodeGroupAnswerIsAlwaysForwarded(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", map[string][]byte{"NodeGroupForNode": group("", 0, 0, "")}, nil)
	client, _ := startFront(t, up.address)
	request := nodeRequest("", "sk-cloudprov-infra", nil, nil)
	for range 3 {
		if _, err := call(t, client, "NodeGroupForNode", request); err != nil {
			t.Fatal(err)
		}
	}
	if n := up.count("NodeGroupForNode"); n != 3 {
		t.Fatalf("upstream asked %d times, want 3", n)
	}
}

func TestOtherMethodsAreForwardedWithTheCallersDeadline(t *testing.T) {
	size := protoVarintField(1, 7)
	up := startUpstream(t, "127.0.0.1:0", map[string][]byte{"NodeGroupTargetSize": size}, nil)
	client, _ := startFront(t, up.address)
	request := field(nil, 1, []byte("pool-0"))
	for range 2 {
		got, err := call(t, client, "NodeGroupTargetSize", request)
		if err != nil || string(got) != string(size) {
			t.Fatalf("answer %x, %v", got, err)
		}
	}
	if n := up.count("NodeGroupTargetSize"); n != 2 {
		t.Fatalf("upstream asked %d times, want 2", n)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if d := up.deadlines["NodeGroupTargetSize"]; d <= 0 || d > 5*time.Second {
		t.Fatalf("upstream saw deadline %v from now, want the caller's (under 5s)", d)
	}
}

func protoVarintField(number int, value uint64) []byte {
	return append([]byte{byte(number<<3) | 0}, byte(value))
}

func TestUpstreamErrorsPassThroughAndAreNeverCached(t *testing.T) {
	refusal := status.Error(codes.NotFound, "no node group 'nope'; sk-cloudprov serves pool-0")
	up := startUpstream(t, "127.0.0.1:0", nil,
		map[string]error{"NodeGroupTemplateNodeInfo": refusal})
	client, cache := startFront(t, up.address)
	request := field(nil, 1, []byte("nope"))
	for range 2 {
		_, err := call(t, client, "NodeGroupTemplateNodeInfo", request)
		if status.Code(err) != codes.NotFound || status.Convert(err).Message() != status.Convert(refusal).Message() {
			t.Fatalf("got %v, want %v", err, refusal)
		}
	}
	if n, _ := cache.stats(); n != 0 || up.count("NodeGroupTemplateNodeInfo") != 2 {
		t.Fatalf("cache holds %d entries, upstream asked %d times", n, up.count("NodeGroupTemplateNodeInfo"))
	}
}

func TestARestartedUpstreamIsAskedAgain(t *testing.T) {
	first := startUpstream(t, "127.0.0.1:0", map[string][]byte{"GPULabel": field(nil, 1, []byte("old"))}, nil)
	client, cache := startFront(t, first.address)
	if got, _ := call(t, client, "GPULabel", nil); string(got) != string(field(nil, 1, []byte("old"))) {
		t.Fatalf("first answer %q", got)
	}
	first.server.Stop()
	deadline := time.Now().Add(5 * time.Second)
	for n, _ := cache.stats(); n != 0; n, _ = cache.stats() {
		if time.Now().After(deadline) {
			t.Fatal("the cache outlived the connection")
		}
		time.Sleep(10 * time.Millisecond)
	}
	second := startUpstream(t, first.address, map[string][]byte{"GPULabel": field(nil, 1, []byte("new"))}, nil)
	got, err := call(t, client, "GPULabel", nil)
	if err != nil || string(got) != string(field(nil, 1, []byte("new"))) {
		t.Fatalf("after the restart: %q, %v", got, err)
	}
	if second.count("GPULabel") != 1 {
		t.Fatal("the restarted upstream was not asked")
	}
}
