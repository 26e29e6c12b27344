package main

import (
	"net/http"
	"net/url"
	"strings"

	"k8s.io/client-go/transport"
)

// kubeletPath is where metrics-server asks a kubelet for its resource metrics (nodes without
// the resource-metrics-path annotation, which is all of this project's fake nodes).
const kubeletPath = "/metrics/resource"

// kwokRoute sends each kubelet request to KWOK at address: metrics-server addresses a node by
// its Hostname address (--kubelet-preferred-address-types=Hostname), which KWOK's node stage
// sets to the node's name, and KWOK serves that node's metrics under its name.
func kwokRoute(address string) transport.WrapperFunc {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(request *http.Request) (*http.Response, error) {
			return next.RoundTrip(routed(request, address))
		})
	}
}

func routed(request *http.Request, address string) *http.Request {
	if request.URL.Path != kubeletPath {
		return request
	}
	node := request.URL.Hostname()
	target := *request.URL
	target.Host = address
	target.Path = "/metrics/nodes/" + url.PathEscape(node) + kubeletPath
	target.RawPath = ""
	out := request.Clone(request.Context())
	out.URL = &target
	out.Host = address
	return out
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(request *http.Request) (*http.Response, error) {
	return f(request)
}

// nodeOf is the node a routed request asks about, for tests.
func nodeOf(path string) string {
	return strings.TrimSuffix(strings.TrimPrefix(path, "/metrics/nodes/"), kubeletPath)
}
