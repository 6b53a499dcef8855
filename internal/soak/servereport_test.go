package soak

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// realRun is the report of a real `secexec soak --serve --duration 3m
// --hostile all --report-json` on the server before fault domains were
// merged (internal/soak/testdata): tenant A's oom killed the shared
// engine, which was replaced; tenant B lost VMs to it; several attacks
// were not defended.
func realRun(t *testing.T) *ServeReport {
	t.Helper()
	data, err := os.ReadFile("testdata/serve-all.json")
	if err != nil {
		t.Fatal(err)
	}
	var r ServeReport
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	r.Violations = nil
	return &r
}

func violations(r *ServeReport) string {
	r.Violations = nil
	r.check(0.10)
	return strings.Join(r.Violations, "\n")
}

// On the real run: tenant B's failures and tenant A's findings are
// violations, and the engine the oom attack killed — and its replacement
// — are not leaks.
func TestServeCheckRealRun(t *testing.T) {
	r := realRun(t)
	var died, replaced bool
	for _, e := range r.Engines {
		died = died || e.Died && e.Expected && e.During == "oom"
		replaced = replaced || e.First > 0 && !e.Died
	}
	if !died || !replaced || r.Idle.Engines[0].PID == r.End.Engines[0].PID {
		t.Fatalf("the kept run has no engine killed by oom and replaced: %+v", r.Engines)
	}
	text := violations(r)
	t.Logf("violations:\n%s", text)
	for _, want := range []string{"tenant B: ", "engine_lost", "(during tenant A's oom", "tenant A detached: unanswered",
		"tenant A tool-ssrf: ssrf", "tenant A sparse-tar: server-memory", "tenant A oom: engine-text"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the violations", want)
		}
	}
	for _, not := range []string{"leaked", "engine pid"} {
		if strings.Contains(text, not) {
			t.Errorf("%q in the violations: the engine lost on purpose or its replacement counted as a leak", not)
		}
	}
}

// The leak rules on the real run's idle states: each kind of leak is
// found, the replacement engine is held to the baseline's descriptors,
// and RSS growth in the last third is.
func TestServeCheckLeaks(t *testing.T) {
	for _, c := range []struct {
		want   string
		mutate func(r *ServeReport)
	}{
		{"leaked engine processes: 2 alive", func(r *ServeReport) {
			r.End.Engines = append(r.End.Engines, ProcSample{PID: 1 << 22, FDs: 3})
		}},
		{"(started during the load) has", func(r *ServeReport) { r.End.Engines[0].FDs = r.Idle.Engines[0].FDs + 1 }},
		{"zombies", func(r *ServeReport) { r.End.Zombies = 1 }},
		{"leaked server descriptors", func(r *ServeReport) { r.End.ServerFDs = r.Idle.ServerFDs + 1 }},
		{"leaked VMs: 1 live", func(r *ServeReport) { r.End.Live.VMs = 1 }},
		{"tenant A lists 1", func(r *ServeReport) { r.End.VMsA = 1 }},
		{"leaked guest processes", func(r *ServeReport) { r.End.Live.Processes = 2 }},
		{"leaked isolates", func(r *ServeReport) { r.End.Live.Isolates = r.End.Live.Warm + 1 }},
		{"leaked engine goroutines", func(r *ServeReport) { r.End.Goroutines = r.Idle.Goroutines + 3 }},
		{"server RSS grew", func(r *ServeReport) {
			post := r.postWarmup()
			early, _ := flatness(post, func(s ServeSample) int64 { return s.Server.RSS })
			for i := len(post) * 2 / 3; i < len(post); i++ {
				post[i].Server.RSS = early * 12 / 10
			}
		}},
		{"the server died during the run", func(r *ServeReport) { r.ServerExit = "signal: killed" }},
		{"engine pid 7 RSS grew", func(r *ServeReport) {
			// An engine living through the whole run, growing.
			for i := range r.Samples {
				r.Samples[i].Engines = append(r.Samples[i].Engines, ProcSample{PID: 7, RSS: int64(100+i) << 20})
			}
		}},
	} {
		r := realRun(t)
		before := violations(r)
		if strings.Contains(before, c.want) {
			t.Fatalf("%q already in the real run's violations", c.want)
		}
		c.mutate(r)
		if after := violations(r); !strings.Contains(after, c.want) {
			t.Errorf("no %q in:\n%s", c.want, after)
		}
	}
	// An engine that ended outside the oom attack (a server retiring a
	// tenant's engine) is no violation by itself.
	r := realRun(t)
	before := violations(r)
	r.Engines[0].During, r.Engines[0].Expected = "fork", false
	if after := violations(r); after != before {
		t.Errorf("an engine's end became a violation:\n%s\nwas:\n%s", after, before)
	}
	// A clean run: the real run's states without its failures, findings
	// and the engine it lost, and flat RSS.
	r = realRun(t)
	r.Steady = map[string]*OpStats{"exec-pipeline": {Runs: 10}}
	r.Attacks, r.Hostile, r.Engines = nil, nil, nil
	r.End = r.Idle
	for i := range r.Samples {
		r.Samples[i].Server.RSS, r.Samples[i].EngineRSS = 40<<20, 300<<20
	}
	r.Duration, r.Warmup = 3*time.Minute, 36*time.Second
	if text := violations(r); text != "" {
		t.Errorf("clean run: %s", text)
	}
}
