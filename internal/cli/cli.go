// Package cli implements the secexec command line: flags in, calls to the
// public secexec API out, exit codes as a Unix user expects them.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/secexec/secexec/internal/engine/metrics"
)

// Exit codes of the CLI itself; a command run in a VM exits with the
// guest's own status instead.
const (
	ExitOK    = 0
	ExitError = 1 // the CLI failed (bad VM configuration, I/O error)
	ExitUsage = 2 // bad flags or arguments
)

// exitError carries a specific exit code out of a command.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError marks mistakes in how the CLI was called.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// Main runs the CLI with args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var se *SignalError
	if errors.As(context.Cause(ctx), &se) {
		// Whatever failed, it failed because the user stopped it.
		return se.ExitCode()
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "secexec: ") {
		msg = "secexec: " + msg
	}
	fmt.Fprintln(stderr, msg)
	var ue *usageError
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") {
		return ExitUsage
	}
	return ExitError
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "secexec",
		Short: "Run untrusted code in a millisecond sandbox",
		Long: `secexec runs code its user did not write — POSIX programs compiled to
WebAssembly, and JavaScript — inside a virtual kernel with its own
filesystem, processes, pipes, permissions (deny by default) and limits.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().String("log-level", "",
		"log records to show on stderr: debug, info, warn or error (default warn; info with "+metrics.PhasesEnv+"=1)")
	addRemoteFlags(root)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{err: fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	root.AddCommand(newVersionCmd(), newExecCmd(), newNodeCmd(), newRunCmd(), newEvalCmd(), newShellCmd(), newSoftwareCmd(), newBenchCmd(), newMetricsCmd(), newServeCmd(), newMCPCmd(), newServeLoadCmd(), newCpCmd(), newVMCmd(), newPortCmd(), newSoakCmd(), newNodeconfCmd())
	return root
}

// logger is the CLI's logger: text records on stderr at the level of
// --log-level. Without the flag it shows warnings and errors, and the
// per-exec phase reports too when $SECEXEC_SESSION_PHASES is 1.
func logger(cmd *cobra.Command) (*slog.Logger, error) {
	level := slog.LevelWarn
	if os.Getenv(metrics.PhasesEnv) == "1" {
		level = slog.LevelInfo
	}
	if v, _ := cmd.Flags().GetString("log-level"); v != "" {
		if err := level.UnmarshalText([]byte(v)); err != nil {
			return nil, &usageError{err: fmt.Errorf("--log-level %q: want debug, info, warn or error", v)}
		}
	}
	return slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level})), nil
}

// Version is the secexec version, set at link time with
// -ldflags "-X github.com/secexec/secexec/internal/cli.Version=v1.2.3";
// otherwise taken from the module's build information.
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// usageArgs turns an argument-count check into a usage error (exit 2).
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &usageError{err: fmt.Errorf("%w (see '%s --help')", err, cmd.CommandPath())}
		}
		return nil
	}
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "secexec "+version())
			return err
		},
	}
}
