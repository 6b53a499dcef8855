package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/spf13/cobra"

	"github.com/secexec/secexec"
)

// runner runs the command of a CLI invocation in vm.
type runner func(ctx context.Context, vm *secexec.VM, eo *secexec.ExecOptions) (*secexec.Result, error)

// runArgv is a runner for a fixed argument vector.
func runArgv(argv []string) runner {
	return func(ctx context.Context, vm *secexec.VM, eo *secexec.ExecOptions) (*secexec.Result, error) {
		return vm.Run(ctx, argv, eo)
	}
}

// runInVM creates a VM from the flags, writes files into it, runs the
// command with stdin passed through and output streamed (or, asJSON,
// collected and printed as JSON), and mirrors its exit status.
//
// With --server the VM is one of the server's and rrun runs the command
// (a nil rrun: the command cannot run there yet).
func runInVM(cmd *cobra.Command, vf *vmFlags, asJSON bool, files map[string][]byte, run runner, rrun remoteRunner) error {
	c, err := remoteOf(cmd)
	if err != nil {
		return err
	}
	if c != nil {
		return runRemote(cmd, c, vf, asJSON, files, rrun)
	}
	if err := vf.localVM(); err != nil {
		return err
	}
	opts, err := vf.options(cmd)
	if err != nil {
		return err
	}
	pubs, err := vf.publications()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	vm, err := secexec.NewVM(ctx, opts)
	if err != nil {
		return err
	}
	defer vm.Close()
	if len(pubs) > 0 {
		stop, err := publish(ctx, vm, pubs, opts.Logger)
		if err != nil {
			return err
		}
		defer stop()
	}
	for name, data := range files {
		if err := vm.FS().WriteFile(ctx, name, data, 0o644); err != nil {
			return err
		}
	}
	eo := &secexec.ExecOptions{Timeout: vf.timeout}
	if !asJSON {
		eo.Stdout, eo.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
	}
	if in := stdinOf(cmd); in != nil {
		eo.Stdin = in
	}
	res, err := run(ctx, vm, eo)
	if err != nil && res == nil {
		return err
	}
	if err := vf.saveSnapshotOf(cmd, vm); err != nil {
		return err
	}
	return finish(cmd, asJSON, res)
}

// finish prints res as JSON if asked and mirrors its status: the
// guest's exit code, 128+n when a signal n stopped the CLI.
func finish(cmd *cobra.Command, asJSON bool, res *secexec.Result) error {
	ctx := cmd.Context()
	if asJSON {
		if err := writeJSON(cmd.OutOrStdout(), res); err != nil {
			return err
		}
	}
	if res.Outcome == secexec.Cancelled {
		return &exitError{code: cancelledCode(ctx)}
	}
	if res.ExitCode != 0 {
		return &exitError{code: res.ExitCode}
	}
	return nil
}

func newNodeCmd() *cobra.Command {
	var vf vmFlags
	c := &cobra.Command{
		Use:   "node [flags] [--] [NODE-ARGS...]",
		Short: "Run node in a fresh VM",
		Long: `Run the VM's node with the given arguments, e.g. -e CODE, -p EXPR or a
guest FILE. secexec's own flags come first; they end at the first argument
that is not a flag, or at "--": put "--" before node's arguments when they
start with a flag of node's (-e, -p, --inspect...), since -e is secexec's
--env. Everything after a FILE is the script's.`,
		Example: `  secexec node -- -e 'console.log(process.version)'
  secexec node --timeout 5s -- -p '6 * 7'
  secexec node --mount ./app:/app:ro /app/index.js --port 3000`,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, kv := range vf.env {
				if !strings.Contains(kv, "=") {
					return &usageError{err: fmt.Errorf("-e/--env %q: want KEY=VALUE (node's own -e goes after \"--\": secexec node -- -e CODE)", kv)}
				}
			}
			argv := append([]string{"node"}, args...)
			return runInVM(cmd, &vf, false, nil, runArgv(argv), remoteArgv(argv))
		},
	}
	vf.register(c)
	guestCommandLine(c)
	// "secexec node -e CODE" reads -e as --env: say where node's flags go.
	c.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{err: fmt.Errorf("%w (node's own flags go after \"--\": secexec node [flags] -- NODE-ARGS; see '%s --help')", err, c.CommandPath())}
	})
	return c
}

func newRunCmd() *cobra.Command {
	var vf vmFlags
	var check bool
	c := &cobra.Command{
		Use:   "run [flags] [--] FILE.js|FILE.mjs|FILE.ts [ARGS...]",
		Short: "Run a host JavaScript or TypeScript file in a fresh VM",
		Long: `Copy a host .js, .mjs, .cjs, .ts, .mts or .cts file into the VM's working
directory and run it with node; TypeScript runs with its types stripped.
secexec's flags come before FILE; the ARGS after it are the script's
(process.argv), flags included.
With --check, TypeScript is type-checked first (by the VM's tsc): type
errors are printed as FILE:LINE:COL - error TSnnnn: message, and the file
does not run (exit 2).`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return &usageError{err: err}
			}
			cwd := vf.cwd
			if cwd == "" {
				cwd = secexec.Workspace
			}
			guest := path.Join(cwd, path.Base(args[0]))
			argv := append([]string{"node", guest}, args[1:]...)
			run, rrun := runArgv(argv), remoteArgv(argv)
			if check {
				// The type check runs on the VM's TS API, which the
				// server does not offer.
				run, rrun = checkFirst(guest, args[0], run), nil
			}
			return runInVM(cmd, &vf, false, map[string][]byte{guest: data}, run, rrun)
		},
	}
	vf.register(c)
	guestCommandLine(c)
	c.Flags().BoolVar(&check, "check", false, "type-check the TypeScript file first (tsc in the VM); on type errors print them and exit 2 without running it")
	return c
}

// checkFirst type-checks guest (the VM's copy of the host file hostName)
// before run, and does not run it when there are errors. Diagnostics name
// the host file, so that editors can jump to them.
func checkFirst(guest, hostName string, run runner) runner {
	return func(ctx context.Context, vm *secexec.VM, eo *secexec.ExecOptions) (*secexec.Result, error) {
		diags, err := vm.TS().CheckFiles(ctx, guest)
		if err != nil {
			return nil, err
		}
		errs := 0
		var out strings.Builder
		for _, d := range diags {
			if d.File == guest {
				d.File = hostName
			}
			if d.Category == "error" {
				errs++
			}
			out.WriteString(d.String() + "\n")
		}
		if errs == 0 {
			if out.Len() > 0 && eo.Stderr != nil {
				_, _ = io.WriteString(eo.Stderr, out.String())
			}
			return run(ctx, vm, eo)
		}
		res := &secexec.Result{ExitCode: 2, Outcome: secexec.Failed}
		fmt.Fprintf(&out, "Found %d error%s.\n", errs, map[bool]string{true: "s"}[errs > 1])
		if eo.Stderr != nil {
			_, err = io.WriteString(eo.Stderr, out.String())
		} else {
			res.Stderr = []byte(out.String())
		}
		return res, err
	}
}

func newEvalCmd() *cobra.Command {
	var vf vmFlags
	c := &cobra.Command{
		Use:   "eval [flags] EXPR",
		Short: "Evaluate a JavaScript expression in a fresh VM and print its JSON value",
		Example: `  secexec eval '1 + 1'
  secexec eval 'require("os").platform()'`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := remoteOf(cmd)
			if err != nil {
				return err
			}
			if c != nil {
				return remoteEval(cmd, c, &vf, args[0])
			}
			if err := vf.localVM(); err != nil {
				return err
			}
			opts, err := vf.options(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			vm, err := secexec.NewVM(ctx, opts)
			if err != nil {
				return err
			}
			defer vm.Close()
			v, err := vm.JS().Evaluate(ctx, args[0], &secexec.ExecOptions{Timeout: vf.timeout})
			if err != nil {
				var ee *secexec.EvalError
				if errors.As(err, &ee) {
					fmt.Fprintln(cmd.ErrOrStderr(), ee.Stack)
					code := ee.Result.ExitCode
					if code == 0 {
						code = 1
					}
					return &exitError{code: code}
				}
				return err
			}
			if _, err = fmt.Fprintln(cmd.OutOrStdout(), string(v)); err != nil {
				return err
			}
			return vf.saveSnapshotOf(cmd, vm)
		},
	}
	vf.register(c)
	return c
}
