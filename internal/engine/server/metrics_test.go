package server

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/engine/client"
	"github.com/secexec/secexec/internal/engine/metrics"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmhost/vmhosttest"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
)

// scrape parses metrics text into "name{l=v,...}" → value (counter or
// gauge value, a histogram's sample count).
func scrape(t *testing.T, text []byte) map[string]float64 {
	t.Helper()
	out, err := metrics.Values(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return out
}

// The Metrics request answers with the server's metrics as text: Run
// outcomes counted by the server, phase reports fed to its Set.
func TestMetricsRequest(t *testing.T) {
	ctx := context.Background()
	set := metrics.New()
	set.ZeroSeries()
	c := connect(t, Config{Token: token, Runtime: vmhosttest.New(nil), Metrics: set})
	pol, err := policy.Parse(allowExec)
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.NewVM(ctx, client.VMConfig{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	var before bytes.Buffer
	if err := c.Metrics(ctx, &before); err != nil {
		t.Fatal(err)
	}
	m0 := scrape(t, before.Bytes())
	if got, ok := m0[`secexec_runs_total{outcome=succeeded}`]; !ok || got != 0 {
		t.Fatalf("zero series missing before any run: %v", m0)
	}
	for _, argv := range [][]string{{"vt-exit", "0"}, {"vt-echo", "hi"}, {"vt-exit", "3"}} {
		if _, err := v.Run(ctx, vmhost.RunSpec{Argv: argv}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.Run(ctx, vmhost.RunSpec{}); !errors.Is(err, errno.EINVAL) {
		t.Fatalf("empty argv: %v", err)
	}
	// A phase report as the engines log it, through the handler an
	// engine process installs.
	h := metrics.NewHandler(nil, set.Observe, false)
	_ = h.Handle(ctx, wasmReport())
	var after bytes.Buffer
	if err := c.Metrics(ctx, &after); err != nil {
		t.Fatal(err)
	}
	m1 := scrape(t, after.Bytes())
	for key, want := range map[string]float64{
		`secexec_runs_total{outcome=succeeded}`:                 2,
		`secexec_runs_total{outcome=failed}`:                    1,
		`secexec_runs_total{outcome=error}`:                     1,
		`secexec_runs_total{outcome=timed_out}`:                 0,
		`secexec_run_duration_seconds{outcome=succeeded}`:       2,
		`secexec_execs_total{engine=wasm,warm_worker=none}`:     1,
		`secexec_wasm_module_cache_total{result=hit}`:           1,
		`secexec_exec_phase_seconds{engine=wasm,phase=run}`:     1,
		`secexec_exec_phase_seconds{engine=js,phase=user_code}`: 0,
	} {
		if got, ok := m1[key]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", key, got, ok, want)
		}
	}
}

// wasmReport is a phase report as internal/wasm logs it.
func wasmReport() slog.Record {
	r := slog.NewRecord(time.Now(), slog.LevelInfo, metrics.WASMPhasesMsg, 0)
	r.AddAttrs(slog.Int("pid", 2), slog.String("command", "true"), slog.String("module_cache", "hit"),
		slog.Duration("module_lookup", time.Microsecond), slog.Duration("compile", 0),
		slog.Duration("instantiate", 50*time.Microsecond), slog.Duration("run", 20*time.Microsecond))
	return r
}
