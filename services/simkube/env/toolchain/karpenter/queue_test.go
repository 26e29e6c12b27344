package main

import (
	"context"
	"testing"
	"time"

	"github.com/awslabs/operatorpkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"

	"simkube.local/toolchain/pacing"
)

// The pinned Karpenter's queue still keeps its commands' channel where the build reads it.
func TestTheQueuesChannelIsFound(t *testing.T) {
	channel, err := queueSource(disruption.NewQueue(nil, nil, nil, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if channel == nil || cap(channel) != 10000 {
		t.Fatalf("channel %v (capacity %d); want upstream's buffered channel of 10000",
			channel, cap(channel))
	}
}

// waitingQueue stands for the queue while a command's replacements are not initialized.
type waitingQueue struct{ delay time.Duration }

func (w waitingQueue) Reconcile(context.Context, *v1.NodeClaim) (reconcile.Result, error) {
	return reconcile.Result{RequeueAfter: w.delay}, nil
}

func (waitingQueue) Name() string { return "disruption.queue" }

// The 1 s look-again while replacements come up is 1 s of trace: 100 ms of wall at 10x.
func TestTheQueueLooksAgainOnThePace(t *testing.T) {
	q := &pacedQueue{inner: waitingQueue{delay: time.Second}, pace: pacing.NewPace(10)}
	result, err := q.Reconcile(context.Background(), &v1.NodeClaim{})
	if err != nil || result.RequeueAfter != 100*time.Millisecond {
		t.Fatalf("requeue after %v (%v); want 100ms", result.RequeueAfter, err)
	}
	done := &pacedQueue{inner: waitingQueue{}, pace: pacing.NewPace(10)}
	if result, _ := done.Reconcile(context.Background(), &v1.NodeClaim{}); result.RequeueAfter != 0 {
		t.Fatalf("a finished command requeued after %v", result.RequeueAfter)
	}
}

func TestPacedWrapsTheQueueAtSpeed(t *testing.T) {
	queue := disruption.NewQueue(nil, nil, nil, nil, nil)
	got, err := paced([]controller.Controller{queue}, pacing.NewPace(10), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got[0].(*pacedQueue); !ok {
		t.Fatalf("the queue became a %T; want *pacedQueue", got[0])
	}
}
