package clock

import (
	"errors"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel/errno"
)

func mustNew(t *testing.T, opts Options) *Clock {
	t.Helper()
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The coarse clock is a monotonic step function of real time whose
// values are multiples of the resolution, at most two steps behind, and
// whose step edges are jittered (not all one resolution apart).
func TestCoarseSteps(t *testing.T) {
	c := mustNew(t, Options{})
	if c.Resolution() != time.Millisecond {
		t.Fatalf("default resolution %v", c.Resolution())
	}
	var last time.Duration
	var edges []time.Duration
	for e := time.Duration(0); e < 200*time.Millisecond; e += time.Microsecond {
		v := c.coarse(e)
		if v%time.Millisecond != 0 {
			t.Fatalf("coarse(%v) = %v: not a multiple of 1ms", e, v)
		}
		if v < last {
			t.Fatalf("coarse(%v) = %v went back from %v", e, v, last)
		}
		if v > e || e-v >= 2*time.Millisecond {
			t.Fatalf("coarse(%v) = %v: more than two steps behind", e, v)
		}
		if v != last {
			edges = append(edges, e)
		}
		last = v
	}
	widths := map[time.Duration]bool{}
	for i := 1; i < len(edges); i++ {
		widths[edges[i]-edges[i-1]] = true
	}
	if len(widths) < 10 {
		t.Errorf("step widths %v: the edges are not jittered", widths)
	}
}

// Readings of a live coarse clock: monotonic, wall = boot + elapsed, all
// on millisecond steps, never finer.
func TestCoarseReadings(t *testing.T) {
	c := mustNew(t, Options{Policy: Coarse, Resolution: 2 * time.Millisecond})
	var lastM time.Duration
	var lastW time.Time
	for i := 0; i < 20000; i++ {
		m, w := c.Monotonic(), c.Now()
		if m%(2*time.Millisecond) != 0 || w.UnixNano()%int64(2*time.Millisecond) != 0 {
			t.Fatalf("reading %d: monotonic %v, wall %v: not on 2ms steps", i, m, w.UnixNano())
		}
		if m < lastM || w.Before(lastW) {
			t.Fatalf("reading %d went backwards", i)
		}
		lastM, lastW = m, w
	}
	if d := time.Since(c.Now()); d < 0 || d > time.Second {
		t.Errorf("coarse wall clock %v off real time", d)
	}
	if got := c.Duration(1234567 * time.Nanosecond); got != 0 {
		t.Errorf("Duration(1.23ms) = %v at 2ms resolution", got)
	}
	host := time.Now().Add(time.Hour)
	if got := c.Stamp(host); got.After(c.Now()) {
		t.Errorf("Stamp of a future time %v is after Now %v", got, c.Now())
	}
	old := time.Unix(1000, 123456789)
	if got := c.Stamp(old); !got.Equal(time.Unix(1000, 122000000)) {
		t.Errorf("Stamp(%v) = %v", old, got)
	}
}

func TestFrozenStandsStill(t *testing.T) {
	c := mustNew(t, Options{Policy: Frozen})
	w, m := c.Now(), c.Monotonic()
	time.Sleep(5 * time.Millisecond)
	if !c.Now().Equal(w) || c.Monotonic() != m || c.Elapsed() != 0 || m == 0 {
		t.Errorf("frozen clock moved: %v %v → %v %v", w, m, c.Now(), c.Monotonic())
	}
	if c.Duration(time.Hour) != 0 {
		t.Error("frozen Duration is not zero")
	}
	if got := c.Stamp(time.Now()); !got.Equal(w) {
		t.Errorf("Stamp of now = %v, want the boot time %v", got, w)
	}
}

func TestRealIsFine(t *testing.T) {
	c := mustNew(t, Options{Policy: Real, Resolution: time.Hour})
	if c.Resolution() != time.Nanosecond {
		t.Errorf("real resolution %v", c.Resolution())
	}
	fine := false
	for i := 0; i < 1000 && !fine; i++ {
		fine = c.Monotonic()%time.Millisecond != 0 && c.Now().UnixNano()%1e6 != 0
	}
	if !fine {
		t.Error("a real clock showed no sub-millisecond part in 1000 readings")
	}
}

func TestBadOptions(t *testing.T) {
	if _, err := New(Options{Policy: 7}); !errors.Is(err, ErrBadPolicy) || !errors.Is(err, errno.EINVAL) {
		t.Errorf("policy 7: %v", err)
	}
	if _, err := New(Options{Resolution: time.Microsecond}); !errors.Is(err, ErrBadResolution) || !errors.Is(err, errno.EINVAL) {
		t.Errorf("1µs: %v", err)
	}
	for _, s := range []string{"", "coarse", "real", "frozen"} {
		p, err := ParsePolicy(s)
		if err != nil || (s != "" && p.String() != s) {
			t.Errorf("ParsePolicy(%q) = %v, %v", s, p, err)
		}
	}
	if _, err := ParsePolicy("fast"); !errors.Is(err, ErrBadPolicy) {
		t.Errorf("ParsePolicy(fast): %v", err)
	}
	var p Policy
	if err := p.UnmarshalText([]byte("frozen")); err != nil || p != Frozen {
		t.Errorf("UnmarshalText: %v %v", p, err)
	}
	if _, err := Policy(9).MarshalText(); !errors.Is(err, ErrBadPolicy) {
		t.Errorf("MarshalText(9): %v", err)
	}
}
