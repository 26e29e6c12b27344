package main

// A node's registration and readiness on the replay's pace.
//
// Karpenter's KWOK provider registers a launched instance's Node after its node class's
// nodeRegistrationDelay, in a goroutine that waits with time.Sleep (sigs.k8s.io/karpenter
// v1.13, kwok/cloudprovider/cloudprovider.go), and KWOK makes the Node Ready after the
// NodePool template's ready-after annotation: both wall time. Divided by the speed they
// were right only while the run's clock moved at its speed; a hold (pacing/pace.go) runs
// trace time at real time, and every hold overlapping them made the node come early by
// hold × (speed − 1) of trace. The node class's delay is also whole seconds (its CRD's
// pattern), so at 10× a 45 s delay became 4 s or 5 s of wall time.
//
// So at a speed simkube gives each node class the delay in trace time, to the millisecond,
// in an annotation (registrationDelayAnnotation), and none in its spec: registrations
// notes, as the provider launches an instance, the trace time and that delay, and the kube
// client the provider creates the Node with waits on the pace until it has passed. The
// provider names the Node "kwok-<NodeClaim>-…", which is how the create finds its launch.
// That client also creates the Node with its readiness held (readyHeld, as sk-cloudprov's
// nodes) and lifts it once the ready-after time, in trace time, has passed on the pace.
//
// Karpenter's registration copies the NodeClaim's annotations onto its Node (v1.13
// nodeclaim/lifecycle/registration.go, syncNode, with the karpenter.sh/registered label),
// and the NodeClaim carries the NodePool template's ready-after, wall time at the speed: a
// few tens of milliseconds after the create it put that back over the held value, and KWOK
// made the Node Ready that much wall time later, holds or not (fidelity: nodes registered
// during a hold turned Ready after 1-4 s of trace instead of 10). So the provider's Create
// returns the NodeClaim with its readiness held too, which is what the copy then writes, and
// the lift waits for the registered label, so that the copy cannot come after it.

import (
	"context"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/karpenter/kwok/apis/v1alpha1"
	kwok "sigs.k8s.io/karpenter/kwok/cloudprovider"
	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/operator"

	"simkube.local/toolchain/pacing"
)

const (
	// kwokNodePrefix starts the name the KWOK provider gives a NodeClaim's Node.
	kwokNodePrefix = "kwok-"
	// registrationDelayAnnotation carries a node class's delay in trace time
	// (env/autoscalers/karpenter_catalog.py REGISTRATION_DELAY_ANNOTATION).
	registrationDelayAnnotation = "simkube.dev/registration-delay"
	// readyAfterAnnotation is the KWOK stage's wait before a Node turns Ready; readyHeld
	// keeps it NotReady until readyNow is set (cloudprov/naming.py).
	readyAfterAnnotation = "simkube.dev/ready-after"
	readyHeld            = "876000h"
	readyNow             = "0s"
	// forgetAfter is how long (trace time) past its due time a launch whose Node never came
	// is kept: a launch that failed before registering is retried under the same name.
	forgetAfter = time.Hour
	// readyPatchAttempts bounds the retries of lifting a Node's readiness.
	readyPatchAttempts = 5
	// registeredWait bounds (wall time) the wait for Karpenter's registration of a Node
	// before its readiness is lifted; registeredPoll is how often it looks.
	registeredWait = 30 * time.Second
	registeredPoll = 10 * time.Millisecond
)

type launch struct {
	at    time.Duration // the pace's trace time when the provider launched it
	delay time.Duration // the registration delay, trace time
}

type registrations struct {
	pace *pacing.Pace
	mu   sync.Mutex
	due  map[string]launch // by NodeClaim name
}

func newRegistrations(p *pacing.Pace) *registrations {
	return &registrations{pace: p, due: map[string]launch{}}
}

// classDelay is a node class's registration delay in trace time: its annotation's, else
// its spec's (wall time at the speed) times the speed.
func classDelay(class *v1alpha1.KWOKNodeClass, speed float64) time.Duration {
	if text, ok := class.Annotations[registrationDelayAnnotation]; ok {
		if d, err := time.ParseDuration(text); err == nil && d >= 0 {
			return d
		}
	}
	return time.Duration(float64(class.Spec.NodeRegistrationDelay.Duration) * speed)
}

// launched notes a NodeClaim's launch with its registration delay (trace time).
func (r *registrations) launched(claim string, delay time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.pace.Elapsed()
	for name, l := range r.due {
		if l.at+l.delay+forgetAfter < now {
			delete(r.due, name)
		}
	}
	r.due[claim] = launch{at: now, delay: delay}
}

// await waits until the launch of the NodeClaim that node is for is due on the pace, or ctx
// ends; a Node of no noted launch (a retried create, a Node not the provider's) passes.
func (r *registrations) await(ctx context.Context, node string) {
	r.mu.Lock()
	var found launch
	ok := false
	for claim, l := range r.due {
		if strings.HasPrefix(node, kwokNodePrefix+claim+"-") {
			found, ok = l, true
			delete(r.due, claim)
			break
		}
	}
	r.mu.Unlock()
	if !ok {
		return
	}
	if left := found.at + found.delay - r.pace.Elapsed(); left > 0 {
		r.pace.Sleep(left, ctx.Done())
	}
}

// pacedRegistration is the KWOK provider noting each launch.
type pacedRegistration struct {
	cloudprovider.CloudProvider
	kube          client.Client
	registrations *registrations
}

func (p pacedRegistration) Create(ctx context.Context, claim *v1.NodeClaim) (*v1.NodeClaim, error) {
	class := &v1alpha1.KWOKNodeClass{}
	if claim.Spec.NodeClassRef != nil {
		err := p.kube.Get(ctx, types.NamespacedName{Name: claim.Spec.NodeClassRef.Name}, class)
		if err != nil { // the provider's own Create reports it
			log.FromContext(ctx).V(1).Info("node class unread for registration", "error", err)
		}
	}
	p.registrations.launched(claim.Name, classDelay(class, p.registrations.pace.Speed))
	created, err := p.CloudProvider.Create(ctx, claim)
	if err != nil || created == nil || !pacedReadiness(claim.Annotations) {
		return created, err
	}
	held := created.DeepCopy() // the provider's Node may share the returned maps
	if held.Annotations == nil {
		held.Annotations = map[string]string{}
	}
	held.Annotations[readyAfterAnnotation] = readyHeld
	return held, nil
}

// pacedReadiness tells whether annotations carry a ready-after this build paces (wall
// time at the speed, not the held value).
func pacedReadiness(annotations map[string]string) bool {
	wall, ok := annotations[readyAfterAnnotation]
	_, err := time.ParseDuration(wall)
	return ok && err == nil && wall != readyHeld
}

// registeringClient is the KWOK provider's kube client: it holds back a Node's create until
// its registration is due on the pace, and its readiness until that is due.
type registeringClient struct {
	client.Client
	registrations *registrations
}

func (c registeringClient) Create(ctx context.Context, obj client.Object,
	opts ...client.CreateOption) error {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return c.Client.Create(ctx, obj, opts...)
	}
	c.registrations.await(ctx, node.Name)
	wall := node.Annotations[readyAfterAnnotation]
	paced := pacedReadiness(node.Annotations)
	if paced {
		node.Annotations[readyAfterAnnotation] = readyHeld
	}
	if err := c.Client.Create(ctx, obj, opts...); err != nil {
		if paced { // the provider retries with the same object: as it came
			node.Annotations[readyAfterAnnotation] = wall
		}
		return err
	}
	if paced {
		after, _ := time.ParseDuration(wall) // read by pacedReadiness
		trace := time.Duration(float64(after) * c.registrations.pace.Speed)
		go c.makeReady(ctx, node.Name, trace)
	}
	return nil
}

// makeReady lifts a Node's readiness once after (trace time) has passed on the pace and
// Karpenter has registered it.
func (c registeringClient) makeReady(ctx context.Context, name string, after time.Duration) {
	if !c.registrations.pace.Sleep(after, ctx.Done()) || !c.awaitRegistered(ctx, name) {
		return
	}
	patch := client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+readyAfterAnnotation+`":"`+readyNow+`"}}}`))
	node := &corev1.Node{}
	node.Name = name
	for attempt := 1; attempt <= readyPatchAttempts; attempt++ {
		err := c.Client.Patch(ctx, node, patch)
		if err == nil || apierrors.IsNotFound(err) {
			return
		}
		log.FromContext(ctx).Error(err, "making a node ready", "node", name, "attempt", attempt)
		time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
	}
}

// awaitRegistered waits until the Node has Karpenter's registered label (true), is gone or
// ctx ends (false); after registeredWait it gives up waiting and says true.
func (c registeringClient) awaitRegistered(ctx context.Context, name string) bool {
	deadline := time.Now().Add(registeredWait)
	for {
		node := &corev1.Node{}
		err := c.Client.Get(ctx, types.NamespacedName{Name: name}, node)
		switch {
		case apierrors.IsNotFound(err):
			return false
		case err == nil && node.Labels[v1.NodeRegisteredLabelKey] == "true":
			return true
		case time.Now().After(deadline):
			log.FromContext(ctx).Info("node not registered in time; made ready anyway",
				"node", name, "waited", registeredWait)
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(registeredPoll):
		}
	}
}

// kwokProvider is the KWOK provider, naming its Nodes in launch order (naming.go) and, at a
// speed, registering them and making them Ready on the pace (upstream's own timing at 1).
func kwokProvider(ctx context.Context, op *operator.Operator, p *pacing.Pace,
	types []*cloudprovider.InstanceType) cloudprovider.CloudProvider {
	names := newLaunchNames(time.Now)
	var kube client.Client = namingClient{Client: op.GetClient(), names: names}
	if p.Speed == 1 {
		return launchOrdered{CloudProvider: kwok.NewCloudProvider(ctx, kube, types), names: names}
	}
	due := newRegistrations(p)
	raw := kwok.NewCloudProvider(ctx, registeringClient{Client: kube, registrations: due}, types)
	return pacedRegistration{CloudProvider: launchOrdered{CloudProvider: raw, names: names},
		kube: op.GetClient(), registrations: due}
}
