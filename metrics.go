package secexec

// [engine] Metrics of the shared engine processes.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/secexec/secexec/internal/engine/client"
	"github.com/secexec/secexec/internal/setup"
)

// Metrics writes the metrics of the default Host's shared engine
// processes (where VMs run by default, see EngineShared) to w, in the
// Prometheus text exposition format (version 0.0.4, the format of a
// /metrics endpoint): per-phase exec durations of the V8 and WebAssembly
// engines, the V8 warm pool's hits and misses, the compiled WebAssembly
// module cache's hits and misses, Run outcomes, and the engine processes'
// Go runtime and process figures. docs/protocol.md lists the metrics.
//
// The engines of every group are reported as one: each series is the
// sum over the live engines (client.MergeMetrics), so counters drop when
// an engine exits or is lost. When no engine is running, the default
// group's is started (it would be by the next NewVM). Nothing is written
// if the call fails. VMs in process or in an engine of their own
// (EngineInProcess, EnginePerVM) are not counted.
func Metrics(ctx context.Context, w io.Writer) error { return defaultHost.Metrics(ctx, w) }

// Metrics is the package function Metrics on this Host.
func (h *Host) Metrics(ctx context.Context, w io.Writer) error {
	for attempt := 0; ; attempt++ {
		conns := h.engines.live()
		if len(conns) == 0 {
			// The engine of the VMs this Host creates by default: the
			// one for these cache directories (it needs no set-up to
			// report).
			dirs, err := setup.DefaultDirs()
			if err != nil {
				return err
			}
			c, release, err := h.engines.get(ctx, "", client.Options{Logger: h.opts.Logger, Env: dirs.Env()})
			if err != nil {
				return err
			}
			release()
			conns = append(conns, c)
		}
		var texts [][]byte
		for _, c := range conns {
			var buf bytes.Buffer
			if err := c.Metrics(ctx, &buf); err != nil {
				// An engine lost since live() has nothing to report.
				if errors.Is(err, ErrEngineLost) {
					continue
				}
				return apiErr(err)
			}
			texts = append(texts, buf.Bytes())
		}
		if len(texts) == 0 && attempt == 0 {
			continue // as in NewVM: engines that died unnoticed are replaced once
		}
		if len(texts) == 0 {
			return fmt.Errorf("secexec: metrics: %w", ErrEngineLost)
		}
		var buf bytes.Buffer
		if err := client.MergeMetrics(&buf, texts); err != nil {
			return err
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("secexec: writing metrics: %w", err)
		}
		return nil
	}
}
