package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/client"
)

func newExecCmd() *cobra.Command {
	var vf vmFlags
	var asJSON, tty bool
	c := &cobra.Command{
		Use:   "exec [flags] [--] CMDLINE [ARG...]",
		Short: "Run a command line in a fresh VM",
		Long: `Run a command line in a fresh VM and exit with its status.

secexec's flags come before the command: everything from the first
argument that is not a flag on is the guest's, flags included, as with
'docker run IMAGE CMD...' (so 'secexec exec node -e CODE' runs node -e
CODE). A "--" before the command is allowed and dropped; a "--" after it
is the guest's.

One argument is a command line: if it is a plain list of words it runs the
program directly, otherwise (pipes, redirections, quotes, variables, ';',
'&&'...) it runs under 'sh -c'. Two or more arguments are an argument
vector run as is, never re-read by a shell: 'secexec exec echo "a | b"'
prints a | b. Standard input is passed through; the guest's stdout and
stderr stream to this process's. With -t the command runs on a terminal
of its own, wired to this one (see 'secexec shell').`,
		Example: `  secexec exec 'echo hello | wc -c'
  secexec exec --timeout 2s node -e 'console.log(1 + 1)'
  secexec exec --mount ./src:/src:ro 'grep -rn TODO /src'
  secexec exec -- ls -l /
  printf 'b\na\n' | secexec exec sort`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if tty {
				if asJSON {
					return &usageError{err: errors.New("--json and -t exclude each other")}
				}
				argv := args
				if len(args) == 1 {
					if argv = secexec.PlainArgv(args[0]); argv == nil {
						argv = []string{"sh", "-c", args[0]}
					}
				}
				return runTerminal(cmd, &vf, argv)
			}
			run := func(ctx context.Context, vm *secexec.VM, eo *secexec.ExecOptions) (*secexec.Result, error) {
				if len(args) == 1 {
					return vm.Exec(ctx, args[0], eo)
				}
				return vm.Run(ctx, args, eo)
			}
			rrun := func(ctx context.Context, vm *client.VM, eo *client.ExecOptions) (*client.Result, error) {
				if len(args) == 1 {
					return vm.Exec(ctx, args[0], eo)
				}
				return vm.Run(ctx, args, eo)
			}
			return runInVM(cmd, &vf, asJSON, nil, run, rrun)
		},
	}
	vf.register(c)
	guestCommandLine(c)
	c.Flags().BoolVarP(&tty, "tty", "t", false, "run the command on a terminal (isatty true, line editing, ^C to its foreground job)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (stdout and stderr base64-encoded) instead of streaming")
	return c
}

// guestCommandLine makes c, a command that ends in a guest command line,
// stop reading flags at the first argument that is not one: what follows
// is the guest's, its flags included (docker run, kubectl exec -- and
// env(1) do the same). A leading "--" still ends secexec's flags.
func guestCommandLine(c *cobra.Command) {
	c.Flags().SetInterspersed(false)
}

// stdinOf returns the command's stdin unless it is an interactive
// terminal, which a one-shot exec should not wait on.
func stdinOf(cmd *cobra.Command) io.Reader {
	in := cmd.InOrStdin()
	if f, ok := in.(*os.File); ok {
		st, err := f.Stat()
		if err != nil || st.Mode()&os.ModeCharDevice != 0 {
			return nil
		}
	}
	return in
}

// jsonResult is the --json shape: stable field names, bytes as base64.
type jsonResult struct {
	ExitCode   int     `json:"exit_code"`
	Outcome    string  `json:"outcome"`
	Reason     string  `json:"reason,omitempty"` // timed_out: "timeout" or "cpu_time"
	Signal     string  `json:"signal,omitempty"`
	Stdout     []byte  `json:"stdout"`
	Stderr     []byte  `json:"stderr"`
	Truncated  bool    `json:"truncated,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

func writeJSON(w io.Writer, r *secexec.Result) error {
	if r == nil {
		return errors.New("no result")
	}
	enc := json.NewEncoder(w)
	return enc.Encode(jsonResult{
		ExitCode: r.ExitCode, Outcome: string(r.Outcome), Reason: string(r.Reason), Signal: r.Signal,
		Stdout: r.Stdout, Stderr: r.Stderr, Truncated: r.Truncated,
		DurationMS: float64(r.Duration.Microseconds()) / 1000,
	})
}
