package client

import (
	"bytes"
	"strings"
	"testing"
)

// Two engines' metrics merge into one set: same series summed, others
// kept, non-additive gauges at their largest, histograms bucket by bucket.
func TestMergeMetrics(t *testing.T) {
	a := `# TYPE secexec_runs_total counter
secexec_runs_total{outcome="succeeded"} 3
# TYPE secexec_live_vms gauge
secexec_live_vms 2
# TYPE process_start_time_seconds gauge
process_start_time_seconds 100
# TYPE secexec_run_duration_seconds histogram
secexec_run_duration_seconds_bucket{le="0.1"} 1
secexec_run_duration_seconds_bucket{le="+Inf"} 3
secexec_run_duration_seconds_sum 0.5
secexec_run_duration_seconds_count 3
`
	b := `# TYPE secexec_runs_total counter
secexec_runs_total{outcome="succeeded"} 4
secexec_runs_total{outcome="failed"} 1
# TYPE secexec_live_vms gauge
secexec_live_vms 5
# TYPE process_start_time_seconds gauge
process_start_time_seconds 200
# TYPE secexec_run_duration_seconds histogram
secexec_run_duration_seconds_bucket{le="0.1"} 2
secexec_run_duration_seconds_bucket{le="+Inf"} 2
secexec_run_duration_seconds_sum 0.25
secexec_run_duration_seconds_count 2
`
	var out bytes.Buffer
	if err := MergeMetrics(&out, [][]byte{[]byte(a), []byte(b)}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`secexec_runs_total{outcome="succeeded"} 7`,
		`secexec_runs_total{outcome="failed"} 1`,
		"secexec_live_vms 7",
		"process_start_time_seconds 200",
		`secexec_run_duration_seconds_bucket{le="0.1"} 3`,
		`secexec_run_duration_seconds_bucket{le="+Inf"} 5`,
		"secexec_run_duration_seconds_sum 0.75",
		"secexec_run_duration_seconds_count 5",
	} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("merged metrics lack %q:\n%s", want, out.String())
		}
	}
	// A family of two types is refused, and nothing is written.
	out.Reset()
	if err := MergeMetrics(&out, [][]byte{[]byte("# TYPE x counter\nx 1\n"), []byte("# TYPE x gauge\nx 1\n")}); err == nil || out.Len() != 0 {
		t.Fatalf("type clash: %v %q", err, out.String())
	}
}
