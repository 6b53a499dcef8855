package client

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// notAdditive are the gauges whose sum over engines means nothing: a
// merge keeps their largest value.
var notAdditive = map[string]bool{
	"process_start_time_seconds":       true,
	"process_max_fds":                  true,
	"process_virtual_memory_max_bytes": true,
	"go_info":                          true,
	"go_gc_gogc_percent":               true,
	"go_gc_gomemlimit_bytes":           true,
	"go_sched_gomaxprocs_threads":      true,
	"go_memstats_last_gc_time_seconds": true,
}

// MergeMetrics writes the metrics of several engines (each as Metrics
// wrote it: sanitized text) to w as one set, families sorted by name: the
// series of the same name and labels are summed (counters, gauges,
// histogram buckets, summary counts and sums), so that the engines of a
// Host report as one. Gauges that do not add up (start time, limits,
// versions) keep their largest value, and summaries of more than one
// engine lose their quantiles, which do not add up either.
func MergeMetrics(w io.Writer, texts [][]byte) error {
	merged := map[string]*dto.MetricFamily{}
	for i, text := range texts {
		var p expfmt.TextParser
		fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
		if err != nil {
			return fmt.Errorf("engine %d's metrics: %w", i, err)
		}
		for name, mf := range fams {
			base := merged[name]
			if base == nil {
				merged[name] = mf
				continue
			}
			if base.GetType() != mf.GetType() {
				return fmt.Errorf("%w: %s is a %s and a %s", errBadMetrics, name, base.GetType(), mf.GetType())
			}
			mergeFamily(base, mf)
		}
	}
	names := make([]string, 0, len(merged))
	for name := range merged {
		names = append(names, name)
	}
	slices.Sort(names)
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, name := range names {
		if err := enc.Encode(merged[name]); err != nil {
			return err
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// labelKey identifies a series of a family by its labels.
func labelKey(m *dto.Metric) string {
	var b strings.Builder
	for _, lp := range m.GetLabel() {
		b.WriteString(lp.GetName())
		b.WriteByte(0)
		b.WriteString(lp.GetValue())
		b.WriteByte(0)
	}
	return b.String()
}

// mergeFamily adds mf's series into base's.
func mergeFamily(base, mf *dto.MetricFamily) {
	byLabels := make(map[string]*dto.Metric, len(base.Metric))
	for _, m := range base.Metric {
		byLabels[labelKey(m)] = m
	}
	for _, m := range mf.Metric {
		into := byLabels[labelKey(m)]
		if into == nil {
			base.Metric = append(base.Metric, m)
			byLabels[labelKey(m)] = m
			continue
		}
		switch base.GetType() {
		case dto.MetricType_COUNTER:
			add(&into.Counter.Value, m.GetCounter().GetValue())
		case dto.MetricType_GAUGE:
			if notAdditive[base.GetName()] {
				v := max(into.GetGauge().GetValue(), m.GetGauge().GetValue())
				into.Gauge.Value = &v
			} else {
				add(&into.Gauge.Value, m.GetGauge().GetValue())
			}
		case dto.MetricType_UNTYPED:
			add(&into.Untyped.Value, m.GetUntyped().GetValue())
		case dto.MetricType_SUMMARY:
			addU(&into.Summary.SampleCount, m.GetSummary().GetSampleCount())
			add(&into.Summary.SampleSum, m.GetSummary().GetSampleSum())
			into.Summary.Quantile = nil
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			h, o := into.Histogram, m.GetHistogram()
			addU(&h.SampleCount, o.GetSampleCount())
			add(&h.SampleSum, o.GetSampleSum())
			for _, ob := range o.GetBucket() {
				i := slices.IndexFunc(h.Bucket, func(b *dto.Bucket) bool { return b.GetUpperBound() == ob.GetUpperBound() })
				if i < 0 {
					h.Bucket = append(h.Bucket, ob)
					continue
				}
				addU(&h.Bucket[i].CumulativeCount, ob.GetCumulativeCount())
			}
			slices.SortFunc(h.Bucket, func(a, b *dto.Bucket) int {
				switch {
				case a.GetUpperBound() < b.GetUpperBound():
					return -1
				case a.GetUpperBound() > b.GetUpperBound():
					return 1
				}
				return 0
			})
		}
	}
}

// add adds v to the value *p points to (which the parser always sets).
func add(p **float64, v float64) {
	if *p == nil {
		*p = new(float64)
	}
	**p += v
}

// addU is add for counts.
func addU(p **uint64, v uint64) {
	if *p == nil {
		*p = new(uint64)
	}
	**p += v
}
