package metrics

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// records keeps what reaches it.
type records struct{ msgs []string }

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.msgs = append(r.msgs, rec.Message)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func TestHandlerRecordsAndForwards(t *testing.T) {
	for _, forward := range []bool{false, true} {
		s := New()
		var next records
		log := slog.New(NewHandler(&next, s.Observe, forward)).With("engine", "x")
		log.Info(JSPhasesMsg, "warm_worker", "warm_worker_hit", "bootstrap", 3*time.Millisecond, "bogus", time.Second)
		log.Info(JSPhasesMsg, "warm_worker", "warm_worker_miss", "user_code", time.Millisecond)
		log.Info(WASMPhasesMsg, "module_cache", "miss", "compile", time.Second, "run", time.Millisecond)
		log.Info(WASMPhasesMsg, "module_cache", "bogus", "run", time.Millisecond)
		log.Warn("something else")
		want := "something else"
		if forward {
			want = strings.Repeat(JSPhasesMsg+"|", 2) + strings.Repeat(WASMPhasesMsg+"|", 2) + want
		}
		if got := strings.Join(next.msgs, "|"); got != want {
			t.Errorf("forward=%v: next got %q, want %q", forward, got, want)
		}
		var buf bytes.Buffer
		if err := s.WriteText(&buf); err != nil {
			t.Fatal(err)
		}
		text := buf.String()
		for _, line := range []string{
			`secexec_execs_total{engine="js",warm_worker="hit"} 1`,
			`secexec_execs_total{engine="js",warm_worker="miss"} 1`,
			`secexec_execs_total{engine="wasm",warm_worker="none"} 2`,
			`secexec_wasm_module_cache_total{result="miss"} 1`,
			`secexec_exec_phase_seconds_count{engine="js",phase="bootstrap"} 1`,
			`secexec_exec_phase_seconds_count{engine="wasm",phase="run"} 2`,
			`secexec_exec_phase_seconds_sum{engine="wasm",phase="compile"} 1`,
		} {
			if !strings.Contains(text, line+"\n") {
				t.Errorf("no %q in\n%s", line, text)
			}
		}
		// Label values come from a fixed set whatever a report holds.
		for _, bad := range []string{"bogus", `secexec_wasm_module_cache_total{result="hit"}`, "go_goroutines"} {
			if strings.Contains(text, bad) {
				t.Errorf("%q in\n%s", bad, text)
			}
		}
	}
}

func TestRunsAndZeroSeries(t *testing.T) {
	s := New()
	s.ZeroSeries()
	s.RegisterProcess()
	s.ObserveRun("succeeded", 2*time.Millisecond)
	s.ObserveRun("no such outcome", time.Millisecond)
	s.ObserveRun("error", -1)
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, line := range []string{
		`secexec_runs_total{outcome="succeeded"} 1`,
		`secexec_runs_total{outcome="error"} 2`,
		`secexec_runs_total{outcome="timed_out"} 0`,
		`secexec_run_duration_seconds_count{outcome="succeeded"} 1`,
		`secexec_run_duration_seconds_count{outcome="failed"} 0`,
		`secexec_execs_total{engine="js",warm_worker="hit"} 0`,
		`secexec_wasm_module_cache_total{result="hit"} 0`,
		`secexec_exec_phase_seconds_count{engine="js",phase="teardown"} 0`,
		`secexec_exec_phase_seconds_count{engine="wasm",phase="module_lookup"} 0`,
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("no %q", line)
		}
	}
	if !strings.Contains(text, "\ngo_goroutines ") || !strings.Contains(text, "\nprocess_resident_memory_bytes ") {
		t.Error("no process metrics")
	}
	if strings.Contains(text, "no such outcome") {
		t.Error("unknown outcome became a label")
	}
}

// BenchmarkReport is the cost an exec pays for its metrics in an engine
// process: logging the phase report and recording it.
func BenchmarkReport(b *testing.B) {
	s := New()
	s.ZeroSeries()
	log := slog.New(NewHandler(slog.DiscardHandler, s.Observe, false))
	ctx := context.Background()
	for b.Loop() {
		log.LogAttrs(ctx, slog.LevelInfo, WASMPhasesMsg,
			slog.Int("pid", 7), slog.String("command", "true"), slog.String("module_cache", "hit"),
			slog.Duration("module_lookup", time.Microsecond), slog.Duration("compile", 0),
			slog.Duration("instantiate", 40*time.Microsecond), slog.Duration("run", 20*time.Microsecond))
	}
}
