package cli_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/secexec/secexec/internal/cli"
)

// counter returns a counter's value from metrics text.
func counter(t *testing.T, text []byte, family, labelValue string) float64 {
	t.Helper()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("metrics do not parse: %v\n%s", err, text)
	}
	for _, m := range fams[family].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetValue() == labelValue {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no %s{%s} in\n%s", family, labelValue, text)
	return 0
}

func TestMetricsPrintsTheEngines(t *testing.T) {
	// The shared engine of this process counts the exec.
	if code, _, errOut := runCLI(t, "", "exec", "true"); code != 0 {
		t.Fatalf("exec: %d %s", code, errOut)
	}
	code, out, errOut := runCLI(t, "", "metrics")
	if code != 0 {
		t.Fatalf("metrics: exit %d: %s", code, errOut)
	}
	if n := counter(t, []byte(out), "secexec_runs_total", "succeeded"); n < 1 {
		t.Errorf("succeeded runs %v", n)
	}
	for _, want := range []string{
		"# TYPE secexec_exec_phase_seconds histogram",
		`secexec_exec_phase_seconds_count{engine="wasm",phase="instantiate"}`,
		`secexec_execs_total{engine="js",warm_worker="hit"}`,
		"# TYPE secexec_wasm_module_cache_total counter",
		"process_resident_memory_bytes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s", want)
		}
	}
}

func TestMetricsListenRefusesNonLoopback(t *testing.T) {
	for _, args := range [][]string{
		{"metrics", "--listen", "0.0.0.0:0"},
		{"metrics", "--listen", "[::]:0"},
		{"metrics", "--listen", "192.0.2.1:0"},
		{"metrics", "--listen", "example.com:0"},
		{"metrics", "--listen", "nocolon"},
		{"metrics", "--allow-non-loopback"},
		{"metrics", "extra"},
	} {
		code, _, errOut := runCLI(t, "", args...)
		if code != cli.ExitUsage || !strings.HasPrefix(errOut, "secexec: ") {
			t.Errorf("%v: exit %d %q", args, code, errOut)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestMetricsListen(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	exited := make(chan int, 1)
	go func() {
		exited <- cli.Main(ctx, []string{"metrics", "--listen", "127.0.0.1:0"}, strings.NewReader(""), &stdout, &stderr)
	}()
	// The address comes on stderr once the socket listens.
	re := regexp.MustCompile(`serving metrics on (http://\S+/metrics)`)
	var url string
	for deadline := time.Now().Add(30 * time.Second); url == ""; {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
			break
		}
		select {
		case code := <-exited:
			t.Fatalf("metrics --listen exited %d: %s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no address announced: %q", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("GET %s: %d %q %v", url, resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	_ = counter(t, body, "secexec_runs_total", "succeeded")
	// Only GET /metrics is served.
	for _, tc := range []struct{ method, path string }{{"POST", "/metrics"}, {"GET", "/"}, {"GET", "/metrics/x"}} {
		req, _ := http.NewRequest(tc.method, strings.TrimSuffix(url, "/metrics")+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("%s %s: 200", tc.method, tc.path)
		}
	}
	cancel()
	if code := <-exited; code != 0 {
		t.Fatalf("exit %d after interrupt: %s", code, stderr.String())
	}
	if stdout.String() != "" {
		t.Errorf("stdout %q", stdout.String())
	}
}
