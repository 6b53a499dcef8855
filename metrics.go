package secexec

// [engine] Metrics of the shared engine process.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/secexec/secexec/internal/engine/client"
	"github.com/secexec/secexec/internal/setup"
)

// Metrics writes the metrics of this program's shared engine process
// (where VMs run by default, see EngineShared) to w, in the Prometheus
// text exposition format (version 0.0.4, the format of a /metrics
// endpoint): per-phase exec durations of the V8 and WebAssembly engines,
// the V8 warm pool's hits and misses, the compiled WebAssembly module
// cache's hits and misses, Run outcomes, and the engine process's Go
// runtime and process figures. docs/protocol.md lists the metrics.
//
// The engine is started if none is running (it would be by the next
// NewVM), so the figures cover the VMs made since it started; counters
// restart from zero when a lost engine is replaced. Nothing is written
// if the call fails. VMs in process or in an engine of their own
// (EngineInProcess, EnginePerVM) are not counted.
func Metrics(ctx context.Context, w io.Writer) error { return defaultHost.Metrics(ctx, w) }

// Metrics is the package function Metrics on this Host: it reports the
// Host's shared engine of the default group (VMs whose
// Options.EngineGroup is empty); engines of named groups are not
// counted.
func (h *Host) Metrics(ctx context.Context, w io.Writer) error {
	// The engine of the VMs this process creates by default: the one
	// for these cache directories (it needs no set-up to report).
	dirs, err := setup.DefaultDirs()
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		c, release, err := h.engines.get(ctx, "", client.Options{Logger: h.opts.Logger, Env: dirs.Env()})
		if err != nil {
			return err
		}
		release()
		var buf bytes.Buffer
		err = c.Metrics(ctx, &buf)
		if err == nil {
			_, err = w.Write(buf.Bytes())
			if err != nil {
				return fmt.Errorf("secexec: writing metrics: %w", err)
			}
			return nil
		}
		// As in NewVM: a shared engine that died unnoticed is replaced
		// once.
		if !errors.Is(err, ErrEngineLost) || attempt > 0 {
			return apiErr(err)
		}
	}
}
