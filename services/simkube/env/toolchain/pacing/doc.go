// Package pacing runs a Go component's timers at a replay's speed: the project's builds of
// Karpenter (toolchain/karpenter) and kube-scheduler (toolchain/kube-scheduler) take their
// clocks from here, so both follow one pace and one notion of a hold.
//
// simkube restarts such a component for every replay at speed s with SIMKUBE_SPEED=s and,
// when the run holds its clock for the autoscaler, SIMKUBE_RUN_CONFIGMAP=namespace/name.
// Unset, the speed is 1 and every constructor here returns clock.RealClock: a process
// started by hand behaves exactly as upstream's.
//
// Two clocks, for two kinds of reader:
//   - NewClock: waits in trace time, Now real. For code that compares its Now with
//     timestamps the API server wrote (Karpenter's controllers).
//   - NewTraceClock: waits in trace time and a Now that advances with trace time. For code
//     that only compares times it took itself (Karpenter's nominations and disruption
//     budgets, kube-scheduler's scheduling queue and its backoffs).
package pacing
