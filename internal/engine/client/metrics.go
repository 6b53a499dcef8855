package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/secexec/secexec/internal/engine/proto"
)

// Metrics fetches the engine's metrics (see docs/protocol.md) and writes
// them to w in the Prometheus text exposition format (version 0.0.4).
//
// The text comes from an engine that guest code may have taken over, so
// it is not passed through: it is parsed, strictly, and what parsed is
// encoded afresh (see SanitizeMetrics). Whatever the engine sent, w gets
// well-formed metrics or nothing.
func (c *Conn) Metrics(ctx context.Context, w io.Writer) error {
	r, err := c.call(ctx, proto.TMetrics, &proto.Metrics{})
	if err != nil {
		return err
	}
	if err := SanitizeMetrics(w, r.Data); err != nil {
		return fmt.Errorf("secexec: engine metrics: %w", err)
	}
	return nil
}

// maxFamilies bounds the metric families taken from an engine.
const maxFamilies = 1024

var errBadMetrics = errors.New("inconsistent metrics")

// SanitizeMetrics parses metrics in the Prometheus text exposition format
// (at most proto.MaxChunk bytes, as a Response carries) and writes them
// to w in that format, families sorted by name. Nothing is written when
// the text does not parse.
func SanitizeMetrics(w io.Writer, text []byte) (err error) {
	if len(text) > proto.MaxChunk {
		return fmt.Errorf("metrics text of %d bytes: %w", len(text), proto.ErrFrameTooLarge)
	}
	// expfmt's parser panics on some malformed input (prometheus/common
	// v0.62.0 dereferences nil on "{}", fixed upstream in
	// prometheus/common#922): a panic is a parse error here.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: malformed metrics text (parser panic: %v)", proto.ErrProtocol, r)
		}
	}()
	var p expfmt.TextParser
	byName, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		return err
	}
	if len(byName) > maxFamilies {
		return fmt.Errorf("%d metric families, more than %d", len(byName), maxFamilies)
	}
	names := make([]string, 0, len(byName))
	for name, mf := range byName {
		// The parser lets some inconsistencies through (a sample line
		// without a name continues the previous metric, say); refuse
		// what a registry would not gather.
		if !model.IsValidMetricName(model.LabelValue(name)) {
			return fmt.Errorf("%w: metric name %q", errBadMetrics, name)
		}
		seen := make(map[string]bool, len(mf.GetMetric()))
		for _, m := range mf.GetMetric() {
			var sig strings.Builder
			labels := make(map[string]bool, len(m.GetLabel()))
			for _, lp := range m.GetLabel() {
				ln, lv := lp.GetName(), lp.GetValue()
				if !model.LabelName(ln).IsValid() || labels[ln] || !utf8.ValidString(lv) {
					return fmt.Errorf("%w: label %q of %s", errBadMetrics, ln, name)
				}
				labels[ln] = true
				sig.WriteString(ln)
				sig.WriteByte(0)
				sig.WriteString(lv)
				sig.WriteByte(0)
			}
			if seen[sig.String()] {
				return fmt.Errorf("%w: duplicate series of %s", errBadMetrics, name)
			}
			seen[sig.String()] = true
		}
		names = append(names, name)
	}
	slices.Sort(names)
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, name := range names {
		if err := enc.Encode(byName[name]); err != nil {
			return err
		}
	}
	_, err = w.Write(buf.Bytes())
	return err
}
