package wasm_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/wasm"
)

// BenchmarkExecPhases splits warm execs of the hottest small commands
// into the engine's phases: how much of an exec instantiating the module
// (wazero InstantiateModule: memory, data segments, tables) takes, next
// to running _start, and to the whole exec as the kernel sees it.
//
// It is the measurement behind not parking pre-instantiated instances
// (issue #5): instantiation is ~10-20% of `true` and ~25-30% of `pwd` and
// `printf` here, but a prototype park that instantiated the hot commands
// in the background saved only 2-9% of back-to-back execs on two cores
// (the refill competes with the next exec, and the exec's run phase got
// slower by 100-170µs: the data segments it used to copy into a warm
// cache were now written long before, on another core), and an
// inconsistent -34%..+43% of paced ones.
func BenchmarkExecPhases(b *testing.B) {
	b.Setenv("SECEXEC_SESSION_PHASES", "1")
	ctx := context.Background()
	env := setup(b)
	var log records
	eng, err := wasm.NewEngine(ctx, wasm.Config{CacheDir: wasmDir, Logger: slog.New(&log)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = eng.Close(ctx) })
	v := newVMWith(b, eng, eng.SoftwareLayer(env.store), vm.Config{})
	for _, bc := range []struct {
		name string
		argv []string
	}{
		{"true", []string{"true"}},
		{"pwd", []string{"pwd"}},
		{"printf", []string{"printf", ""}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			v.exec(ctx, bc.argv, runOpts{}) // compile and cache
			log.mu.Lock()
			log.recs = log.recs[:0]
			log.mu.Unlock()
			n := 0
			for b.Loop() {
				if r := v.exec(ctx, bc.argv, runOpts{}); r.code != 0 {
					b.Fatalf("%q: %q", bc.argv, r.stderr)
				}
				n++
			}
			var inst, run, lookup time.Duration
			log.mu.Lock()
			reports := 0
			for _, rec := range log.recs {
				if rec.Message != "wasm: session phases" {
					continue
				}
				reports++
				rec.Attrs(func(a slog.Attr) bool {
					switch a.Key {
					case "instantiate":
						inst += a.Value.Duration()
					case "run":
						run += a.Value.Duration()
					case "module_lookup":
						lookup += a.Value.Duration()
					}
					return true
				})
			}
			log.mu.Unlock()
			if reports != n {
				b.Fatalf("%d reports for %d execs", reports, n)
			}
			b.ReportMetric(float64(inst.Nanoseconds())/float64(n), "instantiate-ns/op")
			b.ReportMetric(float64(run.Nanoseconds())/float64(n), "run-ns/op")
			b.ReportMetric(float64(lookup.Nanoseconds())/float64(n), "lookup-ns/op")
		})
	}
}
