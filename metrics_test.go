package secexec_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/engine/metrics"
)

// scrapeShared reads the shared engine's metrics into "name{l=v,...}" →
// value (a histogram's sample count).
func scrapeShared(t *testing.T) map[string]float64 {
	t.Helper()
	var buf bytes.Buffer
	if err := secexec.Metrics(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	out, err := metrics.Values(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	return out
}

// The shared engine records its metrics whatever the environment says,
// and Metrics fetches them: execs of WebAssembly commands and of node
// move the phase histograms, the warm-pool and module-cache counters
// and the Run outcomes.
func TestMetricsOfTheSharedEngine(t *testing.T) {
	ctx := context.Background()
	vm := newVM(t, secexec.Options{Permissions: secexec.AllowAll()})
	m0 := scrapeShared(t)
	for _, key := range []string{
		`secexec_runs_total{outcome=succeeded}`,
		`secexec_exec_phase_seconds{engine=wasm,phase=instantiate}`,
		`secexec_exec_phase_seconds{engine=js,phase=bootstrap}`,
		`secexec_wasm_module_cache_total{result=miss}`,
		`secexec_execs_total{engine=js,warm_worker=hit}`,
	} {
		if _, ok := m0[key]; !ok {
			t.Errorf("no %s before the execs", key)
		}
	}
	if m0[`process_resident_memory_bytes{}`] <= 0 || m0[`go_goroutines{}`] <= 0 {
		t.Errorf("no engine process figures: rss %v goroutines %v",
			m0[`process_resident_memory_bytes{}`], m0[`go_goroutines{}`])
	}
	const wasmRuns, jsRuns = 3, 2
	for range wasmRuns {
		if res, err := vm.Exec(ctx, "true", nil); err != nil || res.ExitCode != 0 {
			t.Fatalf("true: %+v %v", res, err)
		}
	}
	for range jsRuns {
		if res, err := vm.Exec(ctx, "node -e ''", nil); err != nil || res.ExitCode != 0 {
			t.Fatalf("node: %+v %v", res, err)
		}
	}
	if res, err := vm.Exec(ctx, "sh -c 'exit 3'", nil); err != nil || res.ExitCode != 3 {
		t.Fatalf("exit 3: %+v %v", res, err)
	}
	// A node process reports its phases after its isolate is torn down,
	// which ends after the exec returned: wait for the reports.
	var m1 map[string]float64
	jsExecs := func(m map[string]float64) float64 {
		return m[`secexec_execs_total{engine=js,warm_worker=hit}`] + m[`secexec_execs_total{engine=js,warm_worker=miss}`]
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		m1 = scrapeShared(t)
		if jsExecs(m1)-jsExecs(m0) >= jsRuns || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	moved := func(key string) float64 { return m1[key] - m0[key] }
	for key, least := range map[string]float64{
		`secexec_runs_total{outcome=succeeded}`:                     wasmRuns + jsRuns,
		`secexec_runs_total{outcome=failed}`:                        1,
		`secexec_run_duration_seconds{outcome=succeeded}`:           wasmRuns + jsRuns,
		`secexec_execs_total{engine=wasm,warm_worker=none}`:         wasmRuns + 1,
		`secexec_exec_phase_seconds{engine=wasm,phase=instantiate}`: wasmRuns + 1,
		`secexec_exec_phase_seconds{engine=wasm,phase=run}`:         wasmRuns + 1,
		`secexec_exec_phase_seconds{engine=js,phase=user_code}`:     jsRuns,
		`secexec_exec_phase_seconds{engine=js,phase=pool_claim}`:    jsRuns,
	} {
		if got := moved(key); got < least {
			t.Errorf("%s moved by %v, want at least %v", key, got, least)
		}
	}
	if got := jsExecs(m1) - jsExecs(m0); got < jsRuns {
		t.Errorf("warm-pool hits and misses moved by %v, want %d", got, jsRuns)
	}
	cache := moved(`secexec_wasm_module_cache_total{result=hit}`) + moved(`secexec_wasm_module_cache_total{result=miss}`)
	if cache < wasmRuns+1 {
		t.Errorf("module cache lookups moved by %v, want at least %d", cache, wasmRuns+1)
	}
}
