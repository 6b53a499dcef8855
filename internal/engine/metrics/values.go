package metrics

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/prometheus/common/expfmt"
)

// Values parses metrics in the Prometheus text format into a map from
// "name{label=value,...}" (labels sorted) to the sample's value: a
// counter's or gauge's value, a histogram's sample count. It is how
// tests and tools read what the engine exposes.
func Values(r io.Reader) (values map[string]float64, err error) {
	// prometheus/common v0.62's parser can panic on malformed input
	// (see client.SanitizeMetrics).
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("metrics: malformed text (parser panic: %v)", p)
		}
	}()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(ls)
			key := name + "{" + strings.Join(ls, ",") + "}"
			switch {
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				out[key] = float64(m.GetHistogram().GetSampleCount())
			case m.GetUntyped() != nil:
				out[key] = m.GetUntyped().GetValue()
			}
		}
	}
	return out, nil
}
