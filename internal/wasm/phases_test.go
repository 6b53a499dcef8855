package wasm_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/wasm"
)

// records is a slog.Handler keeping every record.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// TestSessionPhases: with SECEXEC_SESSION_PHASES=1 every exec reports
// its phases on the host's logger, and nothing of it reaches the guest.
func TestSessionPhases(t *testing.T) {
	t.Setenv("SECEXEC_SESSION_PHASES", "1")
	ctx := context.Background()
	env := setup(t)
	var log records
	eng, err := wasm.NewEngine(ctx, wasm.Config{CacheDir: wasmDir, Logger: slog.New(&log)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close(ctx) })
	v := newVMWith(t, eng, eng.SoftwareLayer(env.store), vm.Config{})
	res := v.exec(ctx, []string{"true"}, runOpts{})
	if res.code != 0 || len(res.stdout) != 0 || len(res.stderr) != 0 {
		t.Fatalf("true: %+v", res)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	var found bool
	for _, rec := range log.recs {
		if rec.Message != "wasm: session phases" {
			continue
		}
		found = true
		attrs := map[string]slog.Value{}
		rec.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value; return true })
		if attrs["command"].String() != "true" || rec.Level != slog.LevelInfo {
			t.Errorf("report %v %v", rec.Level, attrs)
		}
		for _, k := range []string{"module_lookup", "compile", "instantiate", "run"} {
			if v, ok := attrs[k]; !ok || v.Kind() != slog.KindDuration || v.Duration() < 0 {
				t.Errorf("phase %s: %v", k, v)
			}
		}
	}
	if !found {
		var msgs []string
		for _, rec := range log.recs {
			msgs = append(msgs, rec.Message)
		}
		t.Fatalf("no phase report among %q", strings.Join(msgs, "; "))
	}
}
