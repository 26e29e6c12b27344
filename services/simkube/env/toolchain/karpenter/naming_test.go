package main

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
)

// steppedClock is a clock the test moves.
type steppedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *steppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *steppedClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestNamesSortInLaunchOrder(t *testing.T) {
	clock := &steppedClock{now: time.UnixMilli(1795860000000)}
	names := newLaunchNames(clock.Now)
	first := names.of("kwok-simkube-zzzzz-silly-1-abc-9", "simkube-zzzzz")
	if first != "kwok-1795860000000-simkube-zzzzz" {
		t.Fatalf("first name %q", first)
	}
	// The same millisecond: still after it; the same provider name: the same name.
	second := names.of("kwok-simkube-aaaaa-silly-2-def-1", "simkube-aaaaa")
	if second != "kwok-1795860000001-simkube-aaaaa" {
		t.Fatalf("second name %q", second)
	}
	if again := names.of("kwok-simkube-zzzzz-silly-1-abc-9", "simkube-zzzzz"); again != first {
		t.Fatalf("asked again: %q, want %q", again, first)
	}
	clock.add(time.Second)
	third := names.of("kwok-simkube-00000-silly-3-ghi-5", "simkube-00000")
	if !(first < second && second < third) {
		t.Fatalf("names out of launch order: %q %q %q", first, second, third)
	}
	clock.add(2 * namesKept)
	names.of("kwok-simkube-11111-silly-4-jkl-7", "simkube-11111")
	if len(names.names) != 1 {
		t.Fatalf("%d names kept past namesKept; want 1", len(names.names))
	}
}

func TestClaimOfReadsTheProvidersNames(t *testing.T) {
	labels := map[string]string{corev1.LabelHostname: "simkube-2tf5t"}
	for name, want := range map[string]string{
		"kwok-simkube-2tf5t-masterlake-4-kceo3cg1zm-3441779269": "simkube-2tf5t",
		"kwok-1795860000000-simkube-2tf5t":                      "", // renamed already
		"kwok-simkube-2tf5tx-oxtundra-6-mvegtaiwpu-17":          "", // another claim
		"worker-1": "",
	} {
		if got := claimOf(name, labels); got != want {
			t.Errorf("claimOf(%q) = %q; want %q", name, got, want)
		}
	}
	if got := claimOf("kwok-simkube-2tf5t-x-1-y-2", nil); got != "" {
		t.Errorf("without a hostname label: %q", got)
	}
}

// nodeProvider stands for the KWOK provider: its Create makes the Node through kube under
// the provider's own name before it returns (as its goroutine may), and returns the claim
// converted from that Node.
type nodeProvider struct {
	cloudprovider.CloudProvider
	kube namingClient
}

func (p nodeProvider) Create(ctx context.Context, claim *v1.NodeClaim) (*v1.NodeClaim, error) {
	provided := "kwok-" + claim.Name + "-silly-1-abcdefghij-42"
	labels := map[string]string{corev1.LabelHostname: claim.Name}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: provided, Labels: labels},
		Spec: corev1.NodeSpec{ProviderID: kwokProviderPrefix + provided}}
	if err := p.kube.Create(ctx, node); err != nil {
		return nil, err
	}
	return &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: provided, Labels: labels},
		Status: v1.NodeClaimStatus{NodeName: provided, ProviderID: kwokProviderPrefix + provided}}, nil
}

// The Node and the NodeClaim's providerID agree on the launch-ordered name, whichever of
// the two is named first.
func TestTheNodeAndItsClaimCarryTheLaunchOrderedName(t *testing.T) {
	kube := fake.NewClientBuilder().Build()
	clock := &steppedClock{now: time.UnixMilli(1795860000000)}
	names := newLaunchNames(clock.Now)
	provider := launchOrdered{CloudProvider: nodeProvider{
		kube: namingClient{Client: kube, names: names}}, names: names}
	claim := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "simkube-zzzzz"}}
	created, err := provider.Create(context.Background(), claim)
	if err != nil {
		t.Fatal(err)
	}
	want := "kwok-1795860000000-simkube-zzzzz"
	if created.Status.ProviderID != kwokProviderPrefix+want || created.Status.NodeName != want ||
		created.Name != want {
		t.Fatalf("launched claim: name %q, node %q, providerID %q", created.Name,
			created.Status.NodeName, created.Status.ProviderID)
	}
	node := &corev1.Node{}
	if err := kube.Get(context.Background(), types.NamespacedName{Name: want}, node); err != nil {
		t.Fatalf("no Node %q: %v", want, err)
	}
	if node.Spec.ProviderID != kwokProviderPrefix+want {
		t.Fatalf("the Node's providerID is %q", node.Spec.ProviderID)
	}
	// A retried create of the renamed object keeps its name (the API refuses the
	// duplicate), and any other Node passes as it is.
	naming := namingClient{Client: kube, names: names}
	retried := node.DeepCopy()
	retried.ResourceVersion = ""
	if err := naming.Create(context.Background(), retried); !apierrors.IsAlreadyExists(err) ||
		retried.Name != want {
		t.Fatalf("a retried create became %q (%v); want %q refused as a duplicate",
			retried.Name, err, want)
	}
	other := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}}
	if err := naming.Create(context.Background(), other); err != nil || other.Name != "worker-1" {
		t.Fatalf("another Node became %q (%v)", other.Name, err)
	}
}
