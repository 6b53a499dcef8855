package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBenchJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "", "bench", "--n", "3", "--rows", "true", "--json")
	if code != 0 {
		t.Fatalf("bench: exit %d: %s", code, errOut)
	}
	var rows []struct {
		ID       string
		Unit     string
		N        int
		P50, P95 float64
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("bench --json printed invalid JSON: %v\n%s", err, out)
	}
	if len(rows) != 1 || rows[0].ID != "true" || rows[0].Unit != "ms" || rows[0].N != 3 || rows[0].P50 <= 0 || rows[0].P95 < rows[0].P50 {
		t.Fatalf("rows %+v", rows)
	}
}

func TestBenchTableAndUsage(t *testing.T) {
	code, out, errOut := runCLI(t, "", "bench", "--n", "2", "--rows", "pwd", "--engine", "in-process")
	if code != 0 || !strings.Contains(out, "pwd") || !strings.Contains(out, "p50") {
		t.Fatalf("bench table: exit %d: %s%s", code, out, errOut)
	}
	for _, args := range [][]string{
		{"bench", "--engine", "nope"},
		{"bench", "--n", "-1"},
		{"bench", "extra"},
	} {
		if code, _, _ := runCLI(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, _, errOut := runCLI(t, "", "bench", "--rows", "nope"); code != 1 || !strings.Contains(errOut, "unknown row") {
		t.Errorf("unknown row: exit %d: %s", code, errOut)
	}
}

func TestBenchMetrics(t *testing.T) {
	code, out, errOut := runCLI(t, "", "bench", "--n", "3", "--rows", "true,node", "--metrics")
	if code != 0 {
		t.Fatalf("bench --metrics: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`secexec_execs_total{engine="wasm",warm_worker="none"}`,
		`secexec_execs_total{engine="js",warm_worker=`,
		`secexec_exec_phase_seconds_bucket{engine="wasm",phase="instantiate"`,
		`secexec_exec_phase_seconds_count{engine="js",phase="user_code"}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %s:\n%s", want, out)
		}
	}
}
