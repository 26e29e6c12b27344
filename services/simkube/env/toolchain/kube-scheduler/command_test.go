package main

import (
	"testing"

	"simkube.local/toolchain/pacing"
)

// The command takes upstream's flags, so the environment's command line (and a user's
// --scheduler-config) means what it means to upstream's kube-scheduler.
func TestTheCommandHasUpstreamsFlags(t *testing.T) {
	cmd := newCommand(&replay{pace: pacing.NewPace(1)})
	for _, name := range []string{"config", "kubeconfig", "authentication-kubeconfig",
		"authorization-kubeconfig", "bind-address", "secure-port", "cert-dir",
		"feature-gates", "pod-max-in-unschedulable-pods-duration", "version", "v"} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("flag --%s is missing", name)
		}
	}
}

func TestTheCommandRefusesArguments(t *testing.T) {
	cmd := newCommand(&replay{pace: pacing.NewPace(1)})
	if err := cmd.Args(cmd, []string{"extra"}); err == nil {
		t.Fatal("a positional argument was accepted")
	}
}
