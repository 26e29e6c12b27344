// Command kube-scheduler runs Kubernetes' scheduler, unchanged, with its scheduling queue on
// the replay's clock (SIMKUBE_SPEED, default 1).
//
// A pod the scheduler cannot place waits out a backoff before it is tried again: 1 s after
// its first failure, doubling to 10 s (podInitialBackoffSeconds, podMaxBackoffSeconds), and
// the queue moves pods out of backoff in windows of 1 s. Those are whole seconds of wall time
// in the configuration, so a replay at speed s could only divide them down to 1 s: every
// backoff became s seconds of trace (10 s at 10x, where the recorded cluster's grew 1, 2, 4,
// 8, 10 s), and which waiting pod went to a new node first changed with the speed. The
// queue reads time through a clock that scheduler.New accepts (WithClock) and the command
// does not expose; this command builds the scheduler as upstream's does and passes the trace
// clock of the shared pacing package, so backoffs and windows last their configured trace
// time, at real time while the run's clock is held (SIMKUBE_RUN_CONFIGMAP). At speed 1 the
// clock is the real one: a ground truth is upstream's scheduler.
//
// What stays wall time: the 30 s sweep of pods left unschedulable for
// pod-max-in-unschedulable-pods-duration (wait.Until, not the clock; the duration itself
// is trace time), and everything outside the queue (binding, API requests, informers).
package main

import (
	"fmt"
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // the JSON log format, as upstream's main
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"

	"simkube.local/toolchain/pacing"
)

func main() {
	// Checked before anything starts, so a bad value stops the process with a message
	// instead of a scheduler that runs at the wrong speed.
	p, namespace, name, err := pacing.FromEnvironment(os.Getenv)
	if err != nil {
		fail(err)
	}
	replay := &replay{pace: p, holdsNamespace: namespace, holdsName: name}
	os.Exit(cli.Run(newCommand(replay)))
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "kube-scheduler: %v\n", err)
	os.Exit(2)
}
