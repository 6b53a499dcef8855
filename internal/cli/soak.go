package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/secexec/secexec/internal/soak"
)

func newSoakCmd() *cobra.Command {
	var cfg soak.Config
	var quiet, serve bool
	var hostile string
	var serverFlags []string
	var reportJSON string
	var pause time.Duration
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
of the run) may exceed that of the first third by at most --rss-tolerance.

With --serve it soaks the API server instead, as a black box: it starts
'secexec serve' (this binary) on a loopback port with two tenants and
drives it over HTTP. Tenant B (steady, --workers goroutines) creates and
deletes VMs and runs pipelines, node with an npm package, file writes and
reads, tar archives up and down, JS evaluations, JS contexts and processes
over WebSocket; every one must succeed. Tenant A (hostile) rotates through
the attacks --hostile names (all, none, or a comma-separated list), each in
a VM of its own:

` + soak.AttackHelp() + `
An attack may fail; it must be answered within its bound, must not raise
the peak RSS of the server (256 MiB) or the memory of the engines (peak
RSS or Go heap in use, 512 MiB) beyond its bound, must not lose its
engine (engine_lost) unless it is the oom attack, and must leave tenant B
unaffected. The samples cover the server and every engine (its descendant
processes): RSS, descriptors, threads, live VMs, processes and isolates,
each tenant's VMs. At the end, once both tenants deleted their VMs, the
idle state must equal the one after the warm-up (an engine lost to the
oom attack may be replaced, not added to), and the RSS of the server and
of each engine living through the run must be flat by the rule above. A failure names
the tenant, the operation, the answer and what tenant A was doing, e.g.
"tenant B: node-npm failed ...: 503 engine_lost ... (during tenant A's
oom)".`,
		Example: `  secexec soak --duration 30s
  secexec soak --duration 10m --workers 2
  secexec soak --serve --duration 1h --hostile all
  secexec soak --serve --duration 5m --hostile fork,flood,flood-sse`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Duration < 10*time.Second {
				return &usageError{err: fmt.Errorf("--duration %v: at least 10s", cfg.Duration)}
			}
			fl := cmd.Flags()
			if !serve {
				for _, f := range []string{"hostile", "pause", "server-flag", "report-json"} {
					if fl.Changed(f) {
						return &usageError{err: fmt.Errorf("--%s goes with --serve", f)}
					}
				}
			}
			if !quiet {
				cfg.Progress = cmd.ErrOrStderr()
			}
			if serve {
				if fl.Changed("crash-every") {
					return &usageError{err: fmt.Errorf("--crash-every does not go with --serve (tenant A's oom attack kills engines)")}
				}
				names, err := soak.ParseHostile(hostile)
				if err != nil {
					return &usageError{err: err}
				}
				rep, err := soak.RunServe(cmd.Context(), soak.ServeConfig{
					Duration: cfg.Duration, Interval: cfg.Interval, Workers: cfg.Workers, Hostile: names, Pause: pause,
					ServerFlags: serverFlags, NodeModules: cfg.NodeModules, RSSTolerance: cfg.RSSTolerance, Progress: cfg.Progress,
				})
				if rep != nil {
					if werr := rep.WriteText(cmd.OutOrStdout()); werr != nil {
						return werr
					}
					if reportJSON != "" {
						data, jerr := json.MarshalIndent(rep, "", " ")
						if jerr == nil {
							jerr = os.WriteFile(reportJSON, append(data, '\n'), 0o644)
						}
						if jerr != nil {
							return jerr
						}
					}
				}
				return err
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
	fl.IntVar(&cfg.Workers, "workers", 2, "goroutines running the load, each with a VM (with --serve: tenant B's)")
	fl.DurationVar(&cfg.CrashEvery, "crash-every", 0, "time between engine processes killed on purpose (0: duration/6, at least 5s; negative: none)")
	fl.StringVar(&cfg.NodeModules, "node-modules", "", "host node_modules holding the npm package qs (default: the one set-up installed)")
	fl.Float64Var(&cfg.RSSTolerance, "rss-tolerance", 0.10, "allowed RSS growth after warm-up, as a fraction")
	fl.BoolVar(&quiet, "quiet", false, "print only the report, not each sample as it is taken")
	fl.BoolVar(&serve, "serve", false, "soak 'secexec serve' with two tenants, one of them hostile")
	fl.StringVar(&hostile, "hostile", "all", "with --serve: tenant A's attacks: all, none, or names separated by commas")
	fl.DurationVar(&pause, "pause", 2*time.Second, "with --serve: time between two of tenant A's attacks")
	fl.StringVar(&reportJSON, "report-json", "", "with --serve: also write the report, samples included, as JSON to this file")
	fl.StringArrayVar(&serverFlags, "server-flag", nil, "with --serve: a flag for the 'secexec serve' subprocess, e.g. --server-flag=--max-vms=32 (repeatable)")
	return c
}
