package js

import (
	"context"
	"log/slog"
	"sync"
	"testing"
)

// phaseRecords keeps the phase reports logged to it.
type phaseRecords struct {
	mu   sync.Mutex
	recs []map[string]slog.Value
}

func (r *phaseRecords) Enabled(context.Context, slog.Level) bool { return true }
func (r *phaseRecords) Handle(_ context.Context, rec slog.Record) error {
	if rec.Message != "js: session phases" {
		return nil
	}
	attrs := map[string]slog.Value{}
	rec.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value; return true })
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, attrs)
	return nil
}
func (r *phaseRecords) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *phaseRecords) WithGroup(string) slog.Handler      { return r }

// TestSessionPhasesOnHostLogger: with SECEXEC_SESSION_PHASES=1 and no
// logger that shows info, each node process's phases and warm-pool
// outcome go to the host's default logger, never to the guest.
func TestSessionPhasesOnHostLogger(t *testing.T) {
	t.Setenv("SECEXEC_SESSION_PHASES", "1")
	var recs phaseRecords
	prev := slog.Default()
	slog.SetDefault(slog.New(&recs))
	t.Cleanup(func() { slog.SetDefault(prev) })
	e, err := NewEngine(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	v := newVM(t, e)
	const runs = 3
	for range runs {
		if r := v.node(""); r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Fatalf("node -e '': %+v", r)
		}
	}
	// Reports follow the isolate's teardown; Close waits for it.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	recs.mu.Lock()
	defer recs.mu.Unlock()
	if len(recs.recs) != runs {
		t.Fatalf("%d phase reports for %d runs", len(recs.recs), runs)
	}
	st := e.Stats()
	var hits int64
	for _, a := range recs.recs {
		switch a["warm_worker"].String() {
		case "warm_worker_hit":
			hits++
		case "warm_worker_miss":
		default:
			t.Errorf("warm_worker = %v", a["warm_worker"])
		}
		for _, k := range []string{"pool_claim", "isolate_new", "context_new", "bootstrap", "user_code", "teardown"} {
			if v, ok := a[k]; !ok || v.Kind() != slog.KindDuration {
				t.Errorf("phase %s: %v", k, v)
			}
		}
	}
	if hits != st.PoolHits {
		t.Errorf("%d hits reported, Stats says %d", hits, st.PoolHits)
	}
}
