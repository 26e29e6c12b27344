package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/karpenter/kwok/apis/v1alpha1"
	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	"simkube.local/toolchain/pacing"
)

func TestClassDelayPrefersTheTraceAnnotation(t *testing.T) {
	class := &v1alpha1.KWOKNodeClass{}
	class.Spec.NodeRegistrationDelay = metav1.Duration{Duration: 4 * time.Second}
	if got := classDelay(class, 10); got != 40*time.Second {
		t.Errorf("spec 4s at 10x = %v; want 40s", got)
	}
	class.Annotations = map[string]string{registrationDelayAnnotation: "45500ms"}
	if got := classDelay(class, 10); got != 45500*time.Millisecond {
		t.Errorf("annotated 45.5s = %v", got)
	}
	class.Annotations[registrationDelayAnnotation] = "soon"
	if got := classDelay(class, 10); got != 40*time.Second {
		t.Errorf("an unreadable annotation gave %v; want the spec's", got)
	}
}

// The whole delay is waited on the pace: 500 ms of trace at 10x is 50 ms of wall.
func TestAwaitWaitsTheDelayAtTheSpeed(t *testing.T) {
	r := newRegistrations(pacing.NewPace(10))
	r.launched("pool-abc", 500*time.Millisecond)
	start := time.Now()
	r.await(context.Background(), "kwok-pool-abc-xyz-123")
	if took := time.Since(start); took < 45*time.Millisecond || took > time.Second {
		t.Fatalf("await took %v; want about 50 ms", took)
	}
	if len(r.due) != 0 {
		t.Fatal("a registered launch was kept")
	}
}

// A hold during the delay makes it longer in wall time: it passes at real time then.
func TestAwaitFollowsAHold(t *testing.T) {
	p := pacing.NewPace(10)
	r := newRegistrations(p)
	r.launched("pool-abc", 500*time.Millisecond)
	p.SetHeld(true)
	go func() {
		time.Sleep(100 * time.Millisecond) // 100 ms of trace while held
		p.SetHeld(false)
	}()
	start := time.Now()
	r.await(context.Background(), "kwok-pool-abc-xyz-123")
	// 100 ms held, then the remaining 400 ms of trace at 10x: 40 ms.
	if took := time.Since(start); took < 130*time.Millisecond || took > 2*time.Second {
		t.Fatalf("await with a hold took %v; want about 140 ms", took)
	}
}

func TestAwaitPassesOtherNodes(t *testing.T) {
	r := newRegistrations(pacing.NewPace(10))
	r.launched("pool-abc", time.Hour)
	start := time.Now()
	r.await(context.Background(), "kwok-pool-abcd-xyz-1") // another claim's prefix
	r.await(context.Background(), "worker-1")
	if took := time.Since(start); took > 20*time.Millisecond {
		t.Fatalf("nodes of no noted launch waited %v", took)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.await(ctx, "kwok-pool-abc-xyz-1") // its own, but the context ended
	if time.Since(start) > time.Second {
		t.Fatal("an ended context did not end the wait")
	}
}

func readyAfter(t *testing.T, kube client.Client, name string) string {
	t.Helper()
	got := &corev1.Node{}
	if err := kube.Get(context.Background(), types.NamespacedName{Name: name}, got); err != nil {
		t.Fatal(err)
	}
	return got.Annotations[readyAfterAnnotation]
}

// register does what Karpenter's registration does to a Node (syncNode): the NodeClaim's
// annotations over the Node's, and the registered label.
func register(t *testing.T, kube client.Client, name string, claimAnnotations map[string]string) {
	t.Helper()
	node := &corev1.Node{}
	if err := kube.Get(context.Background(), types.NamespacedName{Name: name}, node); err != nil {
		t.Fatal(err)
	}
	for key, value := range claimAnnotations {
		node.Annotations[key] = value
	}
	node.Labels = map[string]string{v1.NodeRegisteredLabelKey: "true"}
	if err := kube.Update(context.Background(), node); err != nil {
		t.Fatal(err)
	}
}

// The Node is created with its readiness held, and made ready once its ready-after (wall
// time at the speed: 20 ms is 200 ms of trace, 20 ms of wall) has passed on the pace and
// Karpenter has registered it.
func TestTheNodeIsMadeReadyOnThePace(t *testing.T) {
	kube := fake.NewClientBuilder().Build()
	c := registeringClient{Client: kube, registrations: newRegistrations(pacing.NewPace(10))}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kwok-pool-abc-x-1",
		Annotations: map[string]string{readyAfterAnnotation: "20ms"}}}
	ctx := context.Background()
	if err := c.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	if got := readyAfter(t, kube, node.Name); got != readyHeld {
		t.Fatalf("created with ready-after %q; want it held", got)
	}
	time.Sleep(60 * time.Millisecond) // the ready-after has passed: not registered yet
	if got := readyAfter(t, kube, node.Name); got != readyHeld {
		t.Fatalf("made ready (%q) before Karpenter registered the node", got)
	}
	register(t, kube, node.Name, map[string]string{readyAfterAnnotation: readyHeld})
	deadline := time.Now().Add(2 * time.Second)
	for readyAfter(t, kube, node.Name) != readyNow {
		if time.Now().After(deadline) {
			t.Fatal("the node was never made ready")
		}
		time.Sleep(5 * time.Millisecond)
	}
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns"}}
	if err := c.Create(ctx, other); err != nil { // anything else passes through
		t.Fatal(err)
	}
}

// A Node deleted before its registration is not waited for, nor patched.
func TestAGoneNodeIsNotMadeReady(t *testing.T) {
	kube := fake.NewClientBuilder().Build()
	c := registeringClient{Client: kube, registrations: newRegistrations(pacing.NewPace(10))}
	start := time.Now()
	c.makeReady(context.Background(), "kwok-pool-abc-x-1", time.Millisecond)
	if took := time.Since(start); took > time.Second {
		t.Fatalf("waited %v for a node that is not there", took)
	}
}

// launchingProvider stands for the KWOK provider: it returns the NodeClaim it was given,
// sharing its annotations map as the provider's conversions may.
type launchingProvider struct{ cloudprovider.CloudProvider }

func (launchingProvider) Create(_ context.Context, claim *v1.NodeClaim) (*v1.NodeClaim, error) {
	return &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: claim.Name,
		Annotations: claim.Annotations}}, nil
}

// The NodeClaim the provider returns (which Karpenter keeps, and copies onto the Node at
// registration) has its readiness held; the claim the Node is made from keeps its own.
func TestTheLaunchedClaimCarriesTheHeldReadiness(t *testing.T) {
	p := pacedRegistration{CloudProvider: launchingProvider{}, kube: fake.NewClientBuilder().Build(),
		registrations: newRegistrations(pacing.NewPace(10))}
	claim := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "pool-abc",
		Annotations: map[string]string{readyAfterAnnotation: "1s"}}}
	created, err := p.Create(context.Background(), claim)
	if err != nil {
		t.Fatal(err)
	}
	if got := created.Annotations[readyAfterAnnotation]; got != readyHeld {
		t.Errorf("the launched claim's ready-after is %q; want it held", got)
	}
	if got := claim.Annotations[readyAfterAnnotation]; got != "1s" {
		t.Errorf("the claim given changed to %q", got)
	}
	plain := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "pool-def"}}
	if created, err = p.Create(context.Background(), plain); err != nil ||
		created.Annotations[readyAfterAnnotation] != "" {
		t.Errorf("a claim without a ready-after came back with %v (%v)", created.Annotations, err)
	}
}
