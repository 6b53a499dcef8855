package bench

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/engine/metrics"
)

// PhasesEnv is the environment variable that turns on the per-exec phase
// reports of the V8 and WebAssembly engines (value "1"). Engines read it
// when they start, so it must be set before a process's first VM.
const PhasesEnv = metrics.PhasesEnv

// Messages of the engines' phase reports.
const (
	jsPhasesMsg   = metrics.JSPhasesMsg
	wasmPhasesMsg = metrics.WASMPhasesMsg
)

// Report is one exec's phase report, decoded from the engine's log record.
type Report = metrics.Report

// Recorder is a slog.Handler that decodes the engines' phase reports
// (and passes every record, reports included, on to the next handler).
// Install it as the host's default logger (slog.SetDefault) to count
// warm-pool hits and misses of in-process VMs.
type Recorder struct {
	st    *recState
	next  slog.Handler
	attrs []slog.Attr // from WithAttrs, for decoding
}

type recState struct {
	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every report
	hits     int64
	misses   int64
	wasmRuns int64
	observe  func(Report)
}

// NewRecorder returns a Recorder forwarding records to next (nil drops
// them) and calling observe, if set, for every decoded report.
func NewRecorder(next slog.Handler, observe func(Report)) *Recorder {
	if next == nil {
		next = slog.DiscardHandler
	}
	return &Recorder{st: &recState{changed: make(chan struct{}), observe: observe}, next: next}
}

// Enabled implements slog.Handler: the reports are always wanted.
func (h *Recorder) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *Recorder) Handle(ctx context.Context, rec slog.Record) error {
	if rep, ok := metrics.Decode(rec, h.attrs); ok {
		h.record(rep)
	}
	if h.next.Enabled(ctx, rec.Level) {
		return h.next.Handle(ctx, rec)
	}
	return nil
}

// WithAttrs implements slog.Handler.
func (h *Recorder) WithAttrs(as []slog.Attr) slog.Handler {
	return &Recorder{st: h.st, next: h.next.WithAttrs(as), attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

// WithGroup implements slog.Handler.
func (h *Recorder) WithGroup(name string) slog.Handler {
	return &Recorder{st: h.st, next: h.next.WithGroup(name), attrs: h.attrs}
}

func (h *Recorder) record(rep Report) {
	st := h.st
	st.mu.Lock()
	switch {
	case rep.Engine == "wasm":
		st.wasmRuns++
	case rep.Hit:
		st.hits++
	default:
		st.misses++
	}
	close(st.changed)
	st.changed = make(chan struct{})
	observe := st.observe
	st.mu.Unlock()
	if observe != nil {
		observe(rep)
	}
}

// Counts returns the JS execs reported so far that hit and missed the
// warm pool.
func (h *Recorder) Counts() (hits, misses int64) {
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	return h.st.hits, h.st.misses
}

// WaitJS waits until at least n JS execs were reported in total. The
// engine reports an exec after its isolate is torn down, which happens
// after the exec returned.
func (h *Recorder) WaitJS(ctx context.Context, n int64) error {
	for {
		h.st.mu.Lock()
		got, ch := h.st.hits+h.st.misses, h.st.changed
		h.st.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("bench: %d of %d phase reports: %w (is %s=1 set before the first VM?)", got, n, ctx.Err(), PhasesEnv)
		}
	}
}

// reportWait bounds how long the hit-rate row waits for late reports.
const reportWait = 30 * time.Second

// hitRatePace spaces the execs of the steady-state hit-rate row. A warm
// isolate takes 10-30 ms to boot here while a warm node exec takes a few,
// so back-to-back execs drain any pool (the "burst" row shows by how
// much); the paced row asks whether the pool serves a steady stream it
// can keep up with: 100 ms is twice the pool's longest refill delay, and
// with two isolates parked a miss needs two slow refills in a row.
const hitRatePace = 100 * time.Millisecond

// hitRate runs node in an in-process VM N times after warming up and
// reports the share of execs that claimed a warm isolate.
func (r *runner) hitRate(ctx context.Context, d rowDef, row Row) (Row, error) {
	row.Unit, row.Note = UnitPercent, "in process"
	rec := r.cfg.Phases
	vm, err := secexec.NewVM(ctx, r.options(secexec.EngineInProcess))
	if err != nil {
		return row, err
	}
	defer vm.Close()
	wctx, cancel := context.WithTimeout(ctx, reportWait)
	defer cancel()
	h0, m0 := rec.Counts()
	for range warmups {
		if err := execOK(ctx, vm, d.cmd); err != nil {
			return row, err
		}
	}
	// Count from when the warm-up's reports (which arrive late) are in.
	if err := rec.WaitJS(wctx, h0+m0+warmups); err != nil {
		return row, err
	}
	h0, m0 = rec.Counts()
	for range r.cfg.N {
		if d.pace > 0 {
			// Load shaping, not an assertion: the row's figure does not
			// depend on how long this takes.
			select {
			case <-time.After(d.pace):
			case <-ctx.Done():
				return row, ctx.Err()
			}
		}
		if err := execOK(ctx, vm, d.cmd); err != nil {
			return row, err
		}
	}
	if err := rec.WaitJS(wctx, h0+m0+int64(r.cfg.N)); err != nil {
		return row, err
	}
	h1, m1 := rec.Counts()
	hits, total := h1-h0, (h1-h0)+(m1-m0)
	row.N = int(total)
	row.Value = 100 * float64(hits) / float64(total)
	return row, nil
}
