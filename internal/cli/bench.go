package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/spf13/cobra"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/bench"
)

func newBenchCmd() *cobra.Command {
	var (
		n       int
		asJSON  bool
		engine  string
		rows    []string
		gate    string
		sustain time.Duration
		metrics bool
	)
	c := &cobra.Command{
		Use:   "bench [flags]",
		Short: "Measure exec latency, memory and throughput",
		Long: `Measure the exec path: p50/p95 of repeated warm execs on one VM, JS
evaluate, one-shot evaluate, VM creation, memory per idle VM and per live
isolate (in process), the V8 warm pool's hit rate, and sustained execs per
second with the warm pool on and off.

Rows: ` + strings.Join(bench.RowIDs(), ", ") + `.

With --gate FILE it instead checks the baseline's rows (best of 3 medians)
and the warm-pool hit rate against FILE and exits 1 on a regression.`,
		Example: `  secexec bench
  secexec bench --n 100 --rows true,node --json
  secexec bench --gate internal/bench/testdata/baseline.json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			mode, err := parseEngine(engine)
			if err != nil {
				return err
			}
			if metrics {
				// The engines report their phases to the logger of the
				// process they run in: measure in this one.
				mode = secexec.EngineInProcess
			}
			if n < 0 || n > 100000 {
				return &usageError{err: fmt.Errorf("--n %d out of range", n)}
			}
			ctx := cmd.Context()
			cfg := bench.Config{N: n, Engine: mode, Rows: rows, Sustain: sustain}
			// The hit-rate row reads the V8 engine's phase reports from the
			// host's logger; they are on only when set before the first VM.
			userPhases := os.Getenv(bench.PhasesEnv) == "1"
			if !userPhases {
				os.Setenv(bench.PhasesEnv, "1")
				defer os.Unsetenv(bench.PhasesEnv)
			}
			prev := slog.Default()
			var next slog.Handler
			if userPhases {
				// Show the reports the user asked for (slog's default
				// handler cannot be wrapped: it writes through the log
				// package, which SetDefault redirects to the new handler).
				next = slog.NewTextHandler(cmd.ErrOrStderr(), nil)
			}
			m := bench.NewMetrics()
			cfg.Phases = bench.NewRecorder(next, m.Observe)
			slog.SetDefault(slog.New(cfg.Phases))
			defer slog.SetDefault(prev)
			if exe, err := os.Executable(); err == nil {
				cfg.NoPool = noPoolRows(exe, n, sustain)
			}
			if !asJSON {
				cfg.Progress = func(id string) { fmt.Fprintf(cmd.ErrOrStderr(), "bench: %s\n", id) }
			}
			if gate != "" {
				b, err := bench.LoadBaseline(gate)
				if err != nil {
					return err
				}
				cfg.NoPool, cfg.Progress = nil, nil
				verdicts, gerr := bench.Gate(ctx, cfg, b)
				for _, v := range verdicts {
					fmt.Fprintln(cmd.OutOrStdout(), v.String())
				}
				return gerr
			}
			res, err := bench.Run(ctx, cfg)
			if err != nil {
				return err
			}
			if metrics {
				return writeMetrics(cmd.OutOrStdout(), m)
			}
			if asJSON {
				return bench.WriteJSON(cmd.OutOrStdout(), res)
			}
			return bench.WriteTable(cmd.OutOrStdout(), res)
		},
	}
	fl := c.Flags()
	fl.IntVar(&n, "n", 30, "samples per latency row")
	fl.BoolVar(&asJSON, "json", false, "print the rows as JSON")
	fl.StringVar(&engine, "engine", "shared", "where the exec rows' VM runs: shared, per-vm or in-process")
	fl.StringSliceVar(&rows, "rows", nil, "measure only these rows (comma-separated IDs)")
	fl.StringVar(&gate, "gate", "", "check against this baseline JSON instead of printing the rows")
	fl.DurationVar(&sustain, "sustain", 2*time.Second, "how long each throughput row runs")
	fl.BoolVar(&metrics, "metrics", false, "run in process and print its phase and warm-pool figures as Prometheus metrics (text format) instead of the rows")
	return c
}

func parseEngine(s string) (secexec.EngineMode, error) {
	switch s {
	case "shared", "":
		return secexec.EngineShared, nil
	case "per-vm":
		return secexec.EnginePerVM, nil
	case "in-process":
		return secexec.EngineInProcess, nil
	}
	return 0, &usageError{err: fmt.Errorf("--engine %q: want shared, per-vm or in-process", s)}
}

// noPoolRows measures the "-nopool" throughput rows in a child bench with
// the V8 warm pool disabled: the pool's capacity is fixed when a process's
// engine starts. The child runs its VM in process so that the variable
// reaches the engine.
func noPoolRows(exe string, n int, sustain time.Duration) func(context.Context, []string) ([]bench.Row, error) {
	return func(ctx context.Context, ids []string) ([]bench.Row, error) {
		base := make([]string, len(ids))
		for i, id := range ids {
			base[i] = strings.TrimSuffix(id, "-nopool")
		}
		c := exec.CommandContext(ctx, exe, "bench", "--json", "--engine", "in-process",
			"--n", strconv.Itoa(n), "--sustain", sustain.String(), "--rows", strings.Join(base, ","))
		c.Env = append(os.Environ(), "SECEXEC_V8_WARM_ISOLATES=0")
		var stderr bytes.Buffer
		c.Stderr = &stderr
		out, err := c.Output()
		if err != nil {
			return nil, fmt.Errorf("child bench: %w: %s", err, strings.TrimSpace(stderr.String()))
		}
		var rows []bench.Row
		if err := json.Unmarshal(out, &rows); err != nil {
			return nil, fmt.Errorf("child bench output: %w", err)
		}
		for i := range rows {
			rows[i].ID += "-nopool"
			rows[i].Label += " (no warm pool)"
			rows[i].Note = "in process"
		}
		return rows, nil
	}
}

// writeMetrics prints the run's metrics in the Prometheus text format.
func writeMetrics(w io.Writer, m *bench.Metrics) error {
	mfs, err := m.Registry().Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}
