package main

// Nodes named in launch order.
//
// Karpenter breaks ties between existing nodes by their names: when a node is drained, its
// provisioner places the pods first-fit on existing nodes, initialized ones first and then
// in name order (v1.13 pkg/controllers/provisioning/scheduling/scheduler.go), and nominates
// the node that takes them, which keeps that node out of the next consolidation pass. The
// KWOK provider names a Node "kwok-<NodeClaim>-<random>-<random>", and NodeClaims get the
// API server's random generateName suffix, so which of two nodes took a drained node's pods
// (and so whether the next command deleted the small node or replaced the large one) was a
// coin flip: a fidelity truth and its replays, or two runs of one seed, went different ways
// from the same state. A cloud's names are arbitrary too, but a simulator's runs must
// repeat; so the Node is named "kwok-<launch>-<NodeClaim>", <launch> the Unix time of the
// launch in milliseconds (13 digits, strictly increasing within the process): name order is
// launch order, across Karpenter's restarts between runs too.
//
// The provider computes the Node (and the NodeClaim's providerID) before it starts the
// goroutine that creates it, which may run before Create returns; so the name is given by
// whichever sees it first, the provider's Create (the providerID it returns) or the kube
// client's Create (the Node), and both see the same.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
)

const (
	// kwokProviderPrefix starts a KWOK node's providerID; the rest is the Node's name.
	kwokProviderPrefix = "kwok://"
	// namesKept is how long a provider-given name's launch-ordered name is remembered.
	namesKept = time.Hour
)

type launchName struct {
	name  string
	given time.Time
}

// launchNames gives each provider-made Node name its launch-ordered name.
type launchNames struct {
	mu    sync.Mutex
	now   func() time.Time
	last  int64                 // the last launch stamp given, Unix ms
	names map[string]launchName // by the provider's name
}

func newLaunchNames(now func() time.Time) *launchNames {
	return &launchNames{now: now, names: map[string]launchName{}}
}

// of is the launch-ordered name for the provider's Node name provided, made for claim;
// the same for every call with one provided name.
func (n *launchNames) of(provided, claim string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if known, ok := n.names[provided]; ok {
		return known.name
	}
	now := n.now()
	for old, l := range n.names {
		if now.Sub(l.given) > namesKept {
			delete(n.names, old)
		}
	}
	stamp := now.UnixMilli()
	if stamp <= n.last {
		stamp = n.last + 1
	}
	n.last = stamp
	name := fmt.Sprintf("kwok-%013d-%s", stamp, claim)
	n.names[provided] = launchName{name: name, given: now}
	return name
}

// claimOf is the NodeClaim a provider-made Node is for: its hostname label (the provider
// sets it to the NodeClaim's name), when its name is the provider's "kwok-<NodeClaim>-…";
// "" for any other Node.
func claimOf(name string, labels map[string]string) string {
	claim := labels[corev1.LabelHostname]
	if claim == "" || !strings.HasPrefix(name, "kwok-"+claim+"-") {
		return ""
	}
	return claim
}

// launchOrdered is the KWOK provider whose NodeClaims carry the launch-ordered providerID.
type launchOrdered struct {
	cloudprovider.CloudProvider
	names *launchNames
}

func (l launchOrdered) Create(ctx context.Context, claim *v1.NodeClaim) (*v1.NodeClaim, error) {
	created, err := l.CloudProvider.Create(ctx, claim)
	if err != nil || created == nil {
		return created, err
	}
	provided, ok := strings.CutPrefix(created.Status.ProviderID, kwokProviderPrefix)
	owner := claimOf(provided, created.Labels)
	if !ok || owner == "" {
		return created, nil
	}
	name := l.names.of(provided, owner)
	renamed := created.DeepCopy()
	renamed.Name = name
	renamed.Status.NodeName = name
	renamed.Status.ProviderID = kwokProviderPrefix + name
	return renamed, nil
}

// namingClient is the KWOK provider's kube client: it creates each provider-made Node under
// its launch-ordered name. A renamed Node (a retried create's object) is not the provider's
// "kwok-<NodeClaim>-…" any more, and passes as it is.
type namingClient struct {
	client.Client
	names *launchNames
}

func (c namingClient) Create(ctx context.Context, obj client.Object,
	opts ...client.CreateOption) error {
	if node, ok := obj.(*corev1.Node); ok {
		if claim := claimOf(node.Name, node.Labels); claim != "" {
			name := c.names.of(node.Name, claim)
			node.Name = name
			node.Spec.ProviderID = kwokProviderPrefix + name
		}
	}
	return c.Client.Create(ctx, obj, opts...)
}
