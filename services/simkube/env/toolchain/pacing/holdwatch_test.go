package pacing

import (
	"context"
	"strconv"
	"testing"
	"time"
)

func TestParseRunConfigMap(t *testing.T) {
	if ns, name, err := ParseRunConfigMap(" sk-cloudprov/simkube-run-timescale "); err != nil ||
		ns != "sk-cloudprov" || name != "simkube-run-timescale" {
		t.Errorf("got %q %q %v", ns, name, err)
	}
	if ns, name, err := ParseRunConfigMap(""); err != nil || ns != "" || name != "" {
		t.Errorf("empty: got %q %q %v", ns, name, err)
	}
	for _, bad := range []string{"name-only", "/name", "ns/", "a/b/c"} {
		if _, _, err := ParseRunConfigMap(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseHolding(t *testing.T) {
	if at, err := parseHolding(""); err != nil || !at.IsZero() {
		t.Errorf("no hold: %v %v", at, err)
	}
	if at, err := parseHolding("1000-3500"); err != nil || !at.Equal(time.UnixMilli(3500)) {
		t.Errorf("got %v %v; want the expiry 3.5 s after the epoch", at, err)
	}
	for _, bad := range []string{"12", "a-b", "5-4", "-3"} {
		if _, err := parseHolding(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func holding(from, to time.Time) map[string]string {
	return map[string]string{holdingKey: strconv.FormatInt(from.UnixMilli(), 10) + "-" +
		strconv.FormatInt(to.UnixMilli(), 10)}
}

func TestFollowerHoldsUntilTheWordOrTheExpiry(t *testing.T) {
	p := NewPace(10)
	f := &holdFollower{pace: p}
	ctx := context.Background()
	now := time.Now()
	f.apply(ctx, holding(now, now.Add(time.Hour)))
	if !isHeld(p) {
		t.Fatal("a published hold did not hold")
	}
	f.apply(ctx, map[string]string{holdingKey: ""})
	if isHeld(p) {
		t.Fatal("an ended hold still holds")
	}
	f.apply(ctx, holding(now, time.Now().Add(30*time.Millisecond)))
	time.Sleep(100 * time.Millisecond)
	if isHeld(p) {
		t.Fatal("a hold past its expiry still holds")
	}
	f.apply(ctx, holding(now.Add(-time.Minute), now.Add(-time.Second)))
	if isHeld(p) {
		t.Fatal("an expired hold held")
	}
	f.apply(ctx, map[string]string{holdingKey: "garbage"})
	f.apply(ctx, nil) // the ConfigMap went
	if isHeld(p) {
		t.Fatal("an unreadable or absent hold held")
	}
}

func isHeld(p *Pace) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}
