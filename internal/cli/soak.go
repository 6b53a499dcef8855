package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/secexec/secexec/internal/soak"
)

func newSoakCmd() *cobra.Command {
	var cfg soak.Config
	var quiet bool
	c := &cobra.Command{
		Use:   "soak [flags]",
		Short: "Run a mixed load for a while and check nothing leaks",
		Long: `Run a mixed load for --duration: shell pipelines, node with an npm
package, CPU, memory and descriptor limits hit on purpose, VMs created and
closed, and engine processes killed on purpose (and recovered from). It
samples the RSS and open descriptors of this process and of the shared
engine, goroutines, engine processes, and the engine's live VMs, guest
processes and V8 isolates, and prints them over time.

It exits 1 if anything leaked (descriptors, guest processes, isolates beyond
the warm pool, VMs, engine processes, compared with the idle state before
the load), if an operation gave an unexpected result, or if RSS grew: the
median of the last third of the samples after the warm-up (the first fifth
of the run) may exceed that of the first third by at most --rss-tolerance.`,
		Example: `  secexec soak --duration 30s
  secexec soak --duration 10m --workers 2`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Duration < 10*time.Second {
				return &usageError{err: fmt.Errorf("--duration %v: at least 10s", cfg.Duration)}
			}
			if !quiet {
				cfg.Progress = cmd.ErrOrStderr()
			}
			rep, err := soak.Run(cmd.Context(), cfg)
			if rep != nil {
				if werr := rep.WriteText(cmd.OutOrStdout()); werr != nil {
					return werr
				}
			}
			// A violation is an error (exit 1) after the report.
			return err
		},
	}
	fl := c.Flags()
	fl.DurationVar(&cfg.Duration, "duration", 30*time.Second, "how long the load runs")
	fl.DurationVar(&cfg.Interval, "interval", 0, "time between samples (0: duration/40, within 1s..15s)")
	fl.IntVar(&cfg.Workers, "workers", 2, "goroutines running the load, each with a VM")
	fl.DurationVar(&cfg.CrashEvery, "crash-every", 0, "time between engine processes killed on purpose (0: duration/6, at least 5s; negative: none)")
	fl.StringVar(&cfg.NodeModules, "node-modules", "", "host node_modules holding the npm package qs (default: the one set-up installed)")
	fl.Float64Var(&cfg.RSSTolerance, "rss-tolerance", 0.10, "allowed RSS growth after warm-up, as a fraction")
	fl.BoolVar(&quiet, "quiet", false, "print only the report, not each sample as it is taken")
	return c
}
