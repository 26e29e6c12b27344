package pacing

// Following the run's holds: sk-ctrl publishes the hold in progress in the run's ConfigMap
// (simulation/run_configmap.py, key "holding": "start-expiry" in Unix ms, "" when the clock
// runs) as it holds the run's clock for the autoscaler. simkube names that ConfigMap in
// SIMKUBE_RUN_CONFIGMAP ("namespace/name") when it restarts a paced component for a run; unset, the
// pace never holds (a run that does not hold, or a process started by hand).
//
// A hold ends when the ConfigMap says so, or at its expiry if no word comes (sk-ctrl died
// mid-hold: sk-driver ends the hold by itself then, and so does this).

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// RunConfigMapVariable names the environment variable with the run's ConfigMap.
const RunConfigMapVariable = "SIMKUBE_RUN_CONFIGMAP"

// holdingKey is the ConfigMap's key for the hold in progress (run_configmap.RunKey.HOLDING).
const holdingKey = "holding"

// ParseRunConfigMap reads "namespace/name"; empty means none.
func ParseRunConfigMap(value string) (namespace, name string, err error) {
	text := strings.TrimSpace(value)
	if text == "" {
		return "", "", nil
	}
	namespace, name, found := strings.Cut(text, "/")
	if !found || namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("%s=%q is not namespace/name", RunConfigMapVariable, value)
	}
	return namespace, name, nil
}

// parseHolding reads the hold in progress: its expiry, or the zero time when none is.
func parseHolding(value string) (time.Time, error) {
	text := strings.TrimSpace(value)
	if text == "" {
		return time.Time{}, nil
	}
	start, expiry, found := strings.Cut(text, "-")
	began, err1 := strconv.ParseInt(start, 10, 64)
	ends, err2 := strconv.ParseInt(expiry, 10, 64)
	if !found || err1 != nil || err2 != nil || ends < began {
		return time.Time{}, fmt.Errorf("%s %q is not 'start-expiry' in Unix ms", holdingKey, value)
	}
	return time.UnixMilli(ends), nil
}

// holdFollower applies what the ConfigMap says to a pace.
type holdFollower struct {
	pace *Pace

	mu     sync.Mutex
	state  int         // bumped by every word, so an expiry only ends the hold it was for
	expiry *time.Timer // ends a hold nobody ended
}

// apply follows one state of the ConfigMap (nil data: it is gone, so no hold).
func (f *holdFollower) apply(ctx context.Context, data map[string]string) {
	expiry, err := parseHolding(data[holdingKey])
	if err != nil { // not ours to fix: run on, unheld, and say why
		logr.FromContextOrDiscard(ctx).Error(err, "the run's hold is unreadable; not holding")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state++
	if f.expiry != nil {
		f.expiry.Stop()
		f.expiry = nil
	}
	left := time.Until(expiry)
	if expiry.IsZero() || left <= 0 {
		if f.pace.SetHeld(false) {
			logr.FromContextOrDiscard(ctx).V(1).Info("the run's clock runs again")
		}
		return
	}
	if f.pace.SetHeld(true) {
		logr.FromContextOrDiscard(ctx).V(1).Info("the run's clock is held", "expires", expiry)
	}
	state := f.state
	f.expiry = time.AfterFunc(left, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.state == state {
			f.pace.SetHeld(false)
		}
	})
}

// FollowHolds keeps p on the holds published in namespace/name until ctx ends.
func FollowHolds(ctx context.Context, client kubernetes.Interface, namespace, name string,
	p *Pace) error {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(options *metav1.ListOptions) {
			options.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	follower := &holdFollower{pace: p}
	changes := make(chan map[string]string, 64) // applied in order, on one goroutine
	send := func(obj any) {
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			changes <- cm.Data
		}
	}
	informer := factory.Core().V1().ConfigMaps().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    send,
		UpdateFunc: func(_, obj any) { send(obj) },
		DeleteFunc: func(any) { changes <- nil },
	}); err != nil {
		return fmt.Errorf("watching %s/%s: %w", namespace, name, err)
	}
	factory.Start(ctx.Done())
	go func() {
		for {
			select {
			case data := <-changes:
				follower.apply(ctx, data)
			case <-ctx.Done():
				return
			}
		}
	}()
	return nil
}

// FromEnvironment reads SIMKUBE_SPEED and SIMKUBE_RUN_CONFIGMAP as simkube sets them for a
// paced build: the pace, and where its holds are published ("" when the run does not hold).
func FromEnvironment(getenv func(string) string) (p *Pace, namespace, name string, err error) {
	speed, err := ParseSpeed(getenv(SpeedVariable))
	if err != nil {
		return nil, "", "", err
	}
	namespace, name, err = ParseRunConfigMap(getenv(RunConfigMapVariable))
	if err != nil {
		return nil, "", "", err
	}
	return NewPace(speed), namespace, name, nil
}
