package client

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/engine/metrics"
	"github.com/secexec/secexec/internal/engine/proto"
)

func sampleMetrics(t testing.TB) []byte {
	s := metrics.New()
	s.ZeroSeries()
	s.ObserveRun("succeeded", 3e5)
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestSanitizeMetrics(t *testing.T) {
	var out bytes.Buffer
	in := sampleMetrics(t)
	if err := SanitizeMetrics(&out, in); err != nil {
		t.Fatal(err)
	}
	// What an engine's registry writes is already in canonical form.
	if !bytes.Equal(out.Bytes(), in) {
		t.Errorf("sanitized differs:\n%s\nfrom\n%s", out.Bytes(), in)
	}
	for _, bad := range []string{
		"not metrics at all {",
		"# TYPE x counter\nx -1 2 3 4\n",
		"x{a=\"1\",a=\"2\"} 1\n",
		"# TYPE x counter\n# TYPE x gauge\nx 1\n",
	} {
		out.Reset()
		if err := SanitizeMetrics(&out, []byte(bad)); err == nil || out.Len() != 0 {
			t.Errorf("%q: accepted (%v), wrote %q", bad, err, out.Bytes())
		}
	}
	// Text over a response's bound is refused unread.
	if err := SanitizeMetrics(&out, []byte(strings.Repeat("x 1\n", 1<<19))); err == nil {
		t.Error("oversized text accepted")
	}
}

// FuzzSanitizeMetrics feeds arbitrary text, as a hostile engine would
// send it: SanitizeMetrics must not panic, must write nothing when it
// fails, and what it writes must be accepted again with the same
// families (only well-formed metrics get through; numbers may be
// normalised on the way, e.g. a bucket count beyond 2^63).
func FuzzSanitizeMetrics(f *testing.F) {
	f.Add(sampleMetrics(f))
	f.Add([]byte("# HELP a b\n# TYPE a histogram\na_bucket{le=\"1\"} 2\na_bucket{le=\"+Inf\"} 3\na_sum 4\na_count 3\n"))
	f.Add([]byte("# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 1\ns_count 1\nu{x=\"\\n\\\"\"} NaN 123\n"))
	f.Add([]byte("g 1e308\n# TYPE h gauge\nh{a=\"\xff\"} -Inf\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		var out bytes.Buffer
		if err := SanitizeMetrics(&out, text); err != nil {
			if out.Len() != 0 {
				t.Fatalf("wrote %q after an error", out.Bytes())
			}
			return
		}
		var again bytes.Buffer
		if err := SanitizeMetrics(&again, out.Bytes()); err != nil {
			t.Fatalf("own output does not parse: %v\n%q", err, out.Bytes())
		}
		if a, b := families(out.Bytes()), families(again.Bytes()); a != b {
			t.Fatalf("families changed: %q → %q", a, b)
		}
	})
}

// families lists the "# TYPE" lines of metrics text.
func families(text []byte) string {
	var out []string
	for _, l := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(l, "# TYPE ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// An engine's metrics are re-encoded, never passed through: text that
// does not parse (here, input that panics expfmt v0.62.0's parser) is an
// error and nothing reaches the writer; the connection stays usable.
func TestMetricsFromAnEngine(t *testing.T) {
	ctx := context.Background()
	answers := [][]byte{
		[]byte("{}"),
		[]byte("x{a=\"1\"} 1\n{a=\"1\"} 2\n"),
		[]byte("# HELP up ok\n# TYPE up gauge\nup 1\n"),
	}
	c, _ := connect(t, func(w *proto.Writer, f proto.Frame) {
		if f.Type == proto.TMetrics {
			text := answers[0]
			answers = answers[1:]
			_ = w.Write(proto.TResponse, f.ID, &proto.Response{Data: text})
		}
	})
	var out bytes.Buffer
	for range 2 {
		if err := c.Metrics(ctx, &out); err == nil || out.Len() != 0 {
			t.Fatalf("malformed metrics: %v, wrote %q", err, out.Bytes())
		}
	}
	if err := c.Metrics(ctx, &out); err != nil || out.String() != "# HELP up ok\n# TYPE up gauge\nup 1\n" {
		t.Fatalf("metrics %q %v", out.String(), err)
	}
	if c.Err() != nil {
		t.Fatalf("connection: %v", c.Err())
	}
}
