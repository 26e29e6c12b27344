package main

import (
	"strings"
	"testing"
)

func TestOptionsRefuseBadInputWithTheFlagNamed(t *testing.T) {
	for args, want := range map[string]string{
		"":                                  "--upstream is required",
		"--upstream=nohost":                 `--upstream "nohost" is not host:port`,
		"--upstream=h:1 --listen=bad":       `--listen "bad" is not host:port`,
		"--upstream=h:1 --metrics-listen=x": `--metrics-listen "x" is not host:port`,
		"--upstream=h:1 --cache-bytes=10":   "--cache-bytes 10 is below",
		"--upstream=h:1 extra":              "unexpected arguments",
	} {
		_, err := parseOptions(strings.Fields(args))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", args, err, want)
		}
	}
	o, err := parseOptions([]string{"--upstream=127.0.0.1:9", "--metrics-listen=127.0.0.1:0"})
	if err != nil || o.listen != "127.0.0.1:8087" || o.cacheBytes != 64<<20 {
		t.Fatalf("defaults: %+v, %v", o, err)
	}
	if o, err := parseOptions([]string{"--upstream=h:1", "--listen=unix:///tmp/front.sock"}); err != nil {
		t.Fatalf("a unix socket: %+v, %v", o, err)
	}
	if o, err := parseOptions([]string{"--upstream=h:1", "--node-key-labels=a, b"}); err != nil ||
		len(o.keyLabels) != 2 || o.keyLabels[1] != "b" {
		t.Fatalf("key labels: %+v, %v", o, err)
	}
	if _, err := logger("loud"); err == nil || !strings.Contains(err.Error(), "--log-level") {
		t.Fatalf("a bad log level: %v", err)
	}
}
