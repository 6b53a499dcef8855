package soak

import (
	"strings"
	"testing"
	"time"
)

func samples(rss ...int64) []Sample {
	out := make([]Sample, len(rss))
	for i, r := range rss {
		out[i] = Sample{T: time.Duration(i) * time.Second, ClientRSS: r, EngineRSS: 100}
	}
	return out
}

// Flatness compares medians of thirds: one spike in either third does not
// decide, steady growth does.
func TestFlatness(t *testing.T) {
	rss := func(s Sample) int64 { return s.ClientRSS }
	for _, c := range []struct {
		rss         []int64
		early, late int64
	}{
		{[]int64{100, 100, 100, 100, 100, 100}, 100, 100},
		{[]int64{100, 900, 100, 100, 100, 100, 100, 900, 100}, 100, 100},
		{[]int64{100, 101, 102, 150, 160, 170, 200, 210, 220}, 101, 210},
		{[]int64{100}, 0, 0},
	} {
		if e, l := Flatness(samples(c.rss...), rss); e != c.early || l != c.late {
			t.Errorf("%v: %d %d, want %d %d", c.rss, e, l, c.early, c.late)
		}
	}
}

// check reports growth beyond the tolerance, leaks, and failures.
func TestCheck(t *testing.T) {
	idle := State{ClientFDs: 10, EngineFDs: 20, EnginePID: 7, Engines: 1, Live: Live{Isolates: 2, Warm: 2}}
	cfg := Config{Duration: 10 * time.Second, RSSTolerance: 0.10, CrashEvery: -1}
	flat := &Report{Duration: 10 * time.Second, Warmup: 2 * time.Second, Execs: 5, Idle: idle, End: idle,
		Samples: samples(100, 100, 100, 105, 100, 108, 109, 105, 109, 109)}
	flat.check(cfg)
	if len(flat.Violations) != 0 {
		t.Fatalf("flat run: %v", flat.Violations)
	}
	end := idle
	end.ClientFDs, end.EngineFDs, end.Live = 11, 21, Live{VMs: 1, Processes: 2, Isolates: 3, Warm: 2}
	end.Engines, end.Zombies, end.EnginePID = 2, 1, 8
	bad := &Report{Duration: 10 * time.Second, Warmup: 2 * time.Second, Execs: 5, Idle: idle, End: end,
		Samples: samples(100, 100, 100, 100, 100, 115, 120, 120, 120, 120), Failures: []string{"npm: boom"}}
	bad.check(cfg)
	text := strings.Join(bad.Violations, "\n")
	for _, want := range []string{"npm: boom", "client RSS grew", "leaked VMs", "leaked guest processes", "leaked isolates",
		"leaked engine processes", "leaked client descriptors", "leaked engine descriptors", "shared engine changed"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
}
