package bench

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec"
)

// TestMain turns the engines' phase reports on before the first VM of
// this test binary starts its V8 engine; the gate counts warm-pool hits
// from them.
func TestMain(m *testing.M) {
	if secexec.IsEngine() {
		secexec.EngineMain()
	}
	os.Setenv(PhasesEnv, "1")
	os.Exit(m.Run())
}

// withRecorder installs a Recorder as the default logger for one test.
func withRecorder(t *testing.T) *Recorder {
	t.Helper()
	rec := NewRecorder(nil, nil)
	prev := slog.Default()
	slog.SetDefault(slog.New(rec))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return rec
}

// TestGate fails when a row's p50 (best of three medians) regresses past
// twice the committed baseline (plus an absolute floor), or when the V8
// warm pool serves fewer than 90% of a steady stream of node execs.
func TestGate(t *testing.T) {
	b, err := LoadBaseline("testdata/baseline.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{N: 15, Engine: secexec.EngineInProcess, Phases: withRecorder(t)}
	verdicts, err := Gate(context.Background(), cfg, b)
	for _, v := range verdicts {
		t.Log(v)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(verdicts) != len(b.P50)+1 {
		t.Fatalf("%d verdicts for %d rows and the hit rate", len(verdicts), len(b.P50))
	}
}

func TestRunRows(t *testing.T) {
	ctx := context.Background()
	rows, err := Run(ctx, Config{N: 3, Engine: secexec.EngineInProcess, Rows: []string{"pwd", "context-eval", "true", "mem-vm", "sustained-true"},
		Sustain: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Canonical order whatever the order asked for; latency rows have
	// ordered percentiles; the others a value.
	want := []string{"true", "pwd", "context-eval", "mem-vm", "sustained-true"}
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", rows)
	}
	for i, r := range rows {
		if r.ID != want[i] {
			t.Fatalf("row %d is %s, want %s", i, r.ID, want[i])
		}
		switch {
		case r.Latency() && (r.P50 <= 0 || r.P95 < r.P50 || r.N != 3):
			t.Errorf("latency row %+v", r)
		case r.Unit == UnitPerSec && (r.Value <= 0 || r.N < 1):
			t.Errorf("throughput row %+v", r)
		}
	}
	var sb strings.Builder
	if err := WriteTable(&sb, rows); err != nil || !strings.Contains(sb.String(), "sustained true") {
		t.Fatalf("table %v:\n%s", err, sb.String())
	}
	sb.Reset()
	var back []Row
	if err := WriteJSON(&sb, rows); err != nil || json.Unmarshal([]byte(sb.String()), &back) != nil || len(back) != len(rows) {
		t.Fatalf("json %v:\n%s", err, sb.String())
	}
}

// The fork rows fork a VM with its files (and close the fork); the
// 100k row's set-up really makes its tree, within the row's limits.
func TestForkRow(t *testing.T) {
	for _, engine := range []secexec.EngineMode{secexec.EngineInProcess, secexec.EngineShared} {
		rows, err := Run(context.Background(), Config{N: 3, Engine: engine, Rows: []string{"fork", "fork-100k"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || rows[0].ID != "fork" || rows[1].ID != "fork-100k" {
			t.Fatalf("rows %+v", rows)
		}
		for _, r := range rows {
			if r.P50 <= 0 || r.P95 < r.P50 {
				t.Fatalf("row %+v", r)
			}
		}
	}
}

// A cold row runs its command as the first exec of fresh engine
// processes (the command fails the row if it fails), and Gate takes
// fewer samples of the slow ones.
func TestColdRows(t *testing.T) {
	rows, err := Run(context.Background(), Config{N: 2, Engine: secexec.EngineInProcess, Rows: []string{"node-cold"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].ID != "node-cold" || rows[0].N != 2 || rows[0].P50 <= 0 || rows[0].P95 < rows[0].P50 {
		t.Fatalf("rows %+v", rows)
	}
	tsc := rowDefs[rowIndex("tsc-cold")]
	if n := (&Config{N: 30}).samples(tsc); n != 30 {
		t.Errorf("tsc-cold takes %d samples, want 30", n)
	}
	if n := (&Config{N: 30, gate: true}).samples(tsc); n != tsc.gateN {
		t.Errorf("tsc-cold takes %d samples in the gate, want %d", n, tsc.gateN)
	}
}

// The python3 and git rows run the real commands (the git rows after
// their set-up made a repository in the VM; git-clone clones it anew
// each time; python-urllib's command fails if the import does).
func TestPythonAndGitRows(t *testing.T) {
	rows, err := Run(context.Background(), Config{N: 2, Engine: secexec.EngineInProcess, Rows: []string{"git-clone", "git-status", "python", "python-paced", "python-urllib"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || rows[0].ID != "python" || rows[1].ID != "python-paced" || rows[2].ID != "python-urllib" || rows[3].ID != "git-status" || rows[4].ID != "git-clone" {
		t.Fatalf("rows %+v", rows)
	}
	for _, r := range rows {
		if r.P50 <= 0 || r.P95 < r.P50 || r.N != 2 {
			t.Errorf("row %+v", r)
		}
	}
}

func TestRunUnknownRow(t *testing.T) {
	_, err := Run(context.Background(), Config{Rows: []string{"true", "nope"}})
	if !errors.Is(err, ErrUnknownRow) {
		t.Fatalf("err = %v", err)
	}
}

func TestHitRateWithoutRecorderIsLeftOut(t *testing.T) {
	rows, err := Run(context.Background(), Config{N: 1, Engine: secexec.EngineInProcess, Rows: []string{"hitrate"}})
	if err != nil || len(rows) != 0 {
		t.Fatalf("rows %+v, err %v", rows, err)
	}
}

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{nil, 50, 0},
		{[]float64{7}, 50, 7},
		{[]float64{7}, 95, 7},
		{[]float64{3, 1, 2}, 50, 2},
		{[]float64{4, 3, 2, 1}, 50, 2},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 95, 10},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9},
	} {
		if got := percentile(tc.xs, tc.p); got != tc.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", tc.xs, tc.p, got, tc.want)
		}
	}
}

func TestParseVmRSS(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"Name:\tx\nVmRSS:\t  1024 kB\nVmData: 5 kB\n", 1 << 20, true},
		{"VmRSS: 0 kB\n", 0, true},
		{"Name: x\n", 0, false},
		{"VmRSS: 12 MB\n", 0, false},
		{"VmRSS: -1 kB\n", 0, false},
		{"VmRSS: 99999999999999999999 kB\n", 0, false},
		{"VmRSS:\n", 0, false},
	} {
		got, err := parseVmRSS(strings.NewReader(tc.in))
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("parseVmRSS(%q) = %d, %v", tc.in, got, err)
		}
		if err != nil && !errors.Is(err, ErrNoRSS) {
			t.Errorf("parseVmRSS(%q): untyped error %v", tc.in, err)
		}
	}
	if n, err := RSS(0); err != nil || n <= 0 {
		t.Fatalf("RSS(0) = %d, %v", n, err)
	}
}

func TestParseBaseline(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`{"p50_ms":{"true":1}}`, true},
		{`{"p50_ms":{"true":1},"factor":3,"floor_ms":2,"min_hit_rate":95}`, true},
		{`{"p50_ms":{"mem-vm":1}}`, false}, // not a latency row
		{`{"p50_ms":{"fetch":100,"node-cold":50,"tsc-cold":3000}}`, true},
		{`{"p50_ms":{"sustained-node":1}}`, false}, // a throughput row
		{`{"p50_ms":{"nope":1}}`, false},           // unknown row
		{`{"p50_ms":{"true":-1}}`, false},          // out of range
		{`{"p50_ms":{"true":1},"x":1}`, false},
		{`{"factor":0.5}`, false},
		{`{"min_hit_rate":101}`, false},
		{`[`, false},
		{strings.Repeat(" ", maxBaselineBytes+1), false},
	} {
		b, err := ParseBaseline(strings.NewReader(tc.in))
		if tc.ok != (err == nil) {
			t.Errorf("ParseBaseline(%.60q) = %v", tc.in, err)
		}
		if err != nil && !errors.Is(err, ErrBadBaseline) {
			t.Errorf("ParseBaseline(%.60q): untyped error %v", tc.in, err)
		}
		if err == nil && (b.Factor < 1 || b.MinHitRate <= 0) {
			t.Errorf("defaults not applied: %+v", b)
		}
	}
}

func TestRecorder(t *testing.T) {
	var seen []Report
	rec := NewRecorder(nil, func(r Report) { seen = append(seen, r) })
	log := slog.New(rec).With("engine", "x")
	log.Info(jsPhasesMsg, "warm_worker", "warm_worker_hit", "bootstrap", 3*time.Millisecond)
	log.Info(jsPhasesMsg, "warm_worker", "warm_worker_miss")
	log.Info(wasmPhasesMsg, "compile", time.Millisecond)
	log.Info("unrelated", "warm_worker", "warm_worker_hit")
	if h, m := rec.Counts(); h != 1 || m != 1 {
		t.Fatalf("counts %d/%d", h, m)
	}
	if len(seen) != 3 || seen[0].Phases["bootstrap"] != 3*time.Millisecond || !seen[0].Hit || seen[2].Engine != "wasm" {
		t.Fatalf("reports %+v", seen)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := rec.WaitJS(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := rec.WaitJS(ctx, 3); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitJS past the reports: %v", err)
	}
}

func FuzzParseBaseline(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBaseline(strings.NewReader(string(data)))
		if err == nil && (b.Factor < 1 || b.MinHitRate < 0 || b.MinHitRate > 100) {
			t.Fatalf("accepted out-of-range baseline %+v", b)
		}
	})
}

func FuzzParseVmRSS(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := parseVmRSS(strings.NewReader(string(data)))
		if err == nil && n < 0 {
			t.Fatalf("negative RSS %d", n)
		}
	})
}

func TestMetrics(t *testing.T) {
	m := NewMetrics()
	rec := NewRecorder(nil, m.Observe)
	log := slog.New(rec)
	log.Info(jsPhasesMsg, "warm_worker", "warm_worker_hit", "bootstrap", 3*time.Millisecond, "bogus", time.Second)
	log.Info(jsPhasesMsg, "warm_worker", "warm_worker_miss", "bootstrap", 5*time.Millisecond)
	log.Info(wasmPhasesMsg, "compile", time.Millisecond, "run", time.Millisecond)
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			key := f.GetName()
			for _, l := range mt.GetLabel() {
				key += "," + l.GetName() + "=" + l.GetValue()
			}
			if c := mt.GetCounter(); c != nil {
				got[key] = c.GetValue()
			}
			if h := mt.GetHistogram(); h != nil {
				got[key] = float64(h.GetSampleCount())
			}
		}
	}
	want := map[string]float64{
		"secexec_execs_total,engine=js,warm_worker=hit":        1,
		"secexec_execs_total,engine=js,warm_worker=miss":       1,
		"secexec_execs_total,engine=wasm,warm_worker=none":     1,
		"secexec_exec_phase_seconds,engine=js,phase=bootstrap": 2,
		"secexec_exec_phase_seconds,engine=wasm,phase=compile": 1,
		"secexec_exec_phase_seconds,engine=wasm,phase=run":     1,
	}
	if len(got) != len(want) {
		t.Errorf("metrics %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}
