package secexec

import (
	"cmp"
	"context"
	"io"
	"maps"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/secexec/secexec/internal/vmhost"
)

// Outcome is how an Exec ended.
type Outcome string

// Outcomes.
const (
	// Succeeded: the program exited with status 0.
	Succeeded Outcome = "succeeded"
	// Failed: the program exited non-zero or was killed by a signal.
	Failed Outcome = "failed"
	// Cancelled: the caller's context ended first; the program was killed.
	Cancelled Outcome = "cancelled"
	// TimedOut: ExecOptions.Timeout passed or the CPU time limit was
	// reached (Result.Reason says which); the program was killed and the
	// exit code is 124.
	TimedOut Outcome = "timed_out"
)

// Reason says which limit ended a TimedOut Exec.
type Reason string

// Reasons.
const (
	// ReasonTimeout: ExecOptions.Timeout (wall clock) passed. Stderr ends
	// with "secexec: timed out after D (wall-clock timeout)".
	ReasonTimeout Reason = "timeout"
	// ReasonCPUTime: the program used Limits.CPUTime of CPU. Stderr ends
	// with TimeLimitMessage.
	ReasonCPUTime Reason = "cpu_time"
)

// TimeLimitMessage is what an Exec ended by the CPU time limit appends
// to stderr.
const TimeLimitMessage = "CPU time limit exceeded"

// DefaultMaxOutput is how many bytes of stdout and of stderr an Exec keeps
// in its Result unless ExecOptions.MaxOutput says otherwise.
const DefaultMaxOutput = 16 << 20

// ExecOptions adjust one Exec. The zero value is valid.
type ExecOptions struct {
	// Stdin is the program's standard input; nil means empty.
	Stdin io.Reader
	// Env adds to (and overrides) the VM's environment.
	Env map[string]string
	// Cwd is the working directory; empty means the VM's.
	Cwd string
	// Timeout kills the program after this long of wall time, with every
	// process it started (detached descendants included); the Result then
	// says TimedOut (Reason ReasonTimeout) with exit code 124, within a
	// second of the deadline whatever holds the output pipes.
	Timeout time.Duration
	// Stdout and Stderr, if set, receive the output as it is produced
	// instead of the Result keeping it.
	Stdout io.Writer
	Stderr io.Writer
	// MaxOutput bounds the bytes kept of each stream in the Result
	// (DefaultMaxOutput if 0); the rest is discarded and Result.Truncated
	// set. It does not apply to Stdout/Stderr writers.
	MaxOutput int
}

// Result is the outcome of an Exec. Every byte the program wrote has
// been delivered by the time it is returned.
type Result struct {
	// ExitCode is the status as a shell shows it: the exit code, 128+n
	// for death by signal n, 124 for a timeout, 127 for a command that
	// was not found, 126 for one that could not be executed.
	ExitCode int
	// Stdout and Stderr are the bytes written, unless streamed to
	// ExecOptions writers.
	Stdout []byte
	Stderr []byte
	// Outcome summarises how it ended.
	Outcome Outcome
	// Reason says which limit ended a TimedOut Exec; empty otherwise.
	Reason Reason
	// Signal names the signal that killed the program, if one did.
	Signal string
	// Truncated is set when output beyond MaxOutput was discarded.
	Truncated bool
	// Duration is the wall time from spawn to exit.
	Duration time.Duration
}

// Exec runs a command line in the VM and waits for it. A command line that
// is a plain argument vector (words only: no expansion, redirection,
// pipes or other shell syntax) runs the program directly; anything else
// runs under `sh -c`. The returned error is non-nil only when the VM could
// not run anything (it is closed, say) or ctx ended (Outcome Cancelled).
//
// An Exec's processes do not outlive it: when the program exits, when
// its Timeout passes, when ctx ends or when the VM is closed, every
// process it started is killed — its kernel lineage, which includes
// descendants that detached into a session or process group of their own
// (node's spawn with detached: true, setsid). Output they had written is
// delivered; nothing they hold can delay the result by more than a
// second. Programs meant to keep running (servers, watchers) are started
// with Spawn.
func (v *VM) Exec(ctx context.Context, cmdline string, opts *ExecOptions) (*Result, error) {
	argv := PlainArgv(cmdline)
	if argv == nil {
		argv = []string{"sh", "-c", cmdline}
	}
	return v.Run(ctx, argv, opts)
}

// Run runs argv in the VM and waits for it, as Exec does for a plain
// command line.
func (v *VM) Run(ctx context.Context, argv []string, opts *ExecOptions) (*Result, error) {
	if opts == nil {
		opts = &ExecOptions{}
	}
	return v.b.run(ctx, argv, v.env, opts)
}

// PlainArgv returns the words of cmdline if it is a single simple command
// made only of literal words (quotes allowed), else nil. Such a command
// line means the same with and without a shell, so it can skip the shell.
func PlainArgv(cmdline string) []string {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmdline), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil
	}
	st := f.Stmts[0]
	if st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 {
		return nil
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil
	}
	argv := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		s, ok := literalWord(w)
		if !ok {
			return nil
		}
		argv = append(argv, s)
	}
	// Words the shell would treat specially even when literal.
	switch argv[0] {
	case "cd", "exit", "export", "unset", "set", "source", ".", "exec", "eval", "alias",
		"ulimit", "umask", "wait", "trap", "shift", "read", "local", "declare", "typeset":
		return nil
	}
	return argv
}

// literalWord returns the value of a word that involves no expansion.
func literalWord(w *syntax.Word) (string, bool) {
	var sb strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[]~{}\\") || (i == 0 && strings.HasPrefix(p.Value, "~")) {
				return "", false
			}
			sb.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			sb.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(lit.Value, "\\") {
					return "", false
				}
				sb.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return sb.String(), true
}

// Signal is a signal a host may send to a process.
type Signal int

// Signals commonly sent from the host.
const (
	SIGHUP  Signal = 1
	SIGINT  Signal = 2
	SIGKILL Signal = 9
	SIGTERM Signal = 15
	SIGCONT Signal = 18
	SIGSTOP Signal = 19
)

// SpawnOptions adjust a Spawn.
type SpawnOptions struct {
	// Env adds to (and overrides) the VM's environment.
	Env map[string]string
	// Cwd is the working directory; empty means the VM's.
	Cwd string
	// PTY, when set, runs the program on a new pseudo-terminal of the VM
	// instead of pipes (see PTY).
	PTY *PTY
}

// PTY asks Spawn for a terminal of Rows x Cols characters (zero: 24 x 80).
// The program then leads a new session with the terminal as its
// controlling terminal and stdin, stdout and stderr: isatty is true,
// bash edits lines, node opens its REPL, ^C interrupts the foreground
// job. The Process's Stdin is the terminal's keyboard (write keys, e.g.
// "" for ^C), Stdout is its screen (echo and output, with CR-LF line
// ends), and Stderr is empty. Answering the terminal queries programs
// send (the cursor position request ESC[6n, to which a terminal replies
// ESC[row;colR) is the caller's job, as a terminal emulator's; bash waits
// about two seconds for that reply before it draws its prompt. Close
// both Stdin and Stdout to hang the terminal up.
type PTY struct {
	Rows, Cols int
	// Term is TERM in the program's environment unless SpawnOptions.Env
	// sets it; empty means "xterm-256color". (The VM's own default,
	// "dumb", is for output without a terminal.)
	Term string
}

// ExitStatus is how a spawned process ended.
type ExitStatus struct {
	// ExitCode is the status as a shell shows it (128+n for signal n).
	ExitCode int
	// Signal names the signal that killed it, if one did.
	Signal string
}

// Process is a running guest process started by Spawn. Write its input
// to Stdin (Close it to signal end of input) and read Stdout and Stderr
// until EOF; Wait returns after the process exited.
type Process struct {
	// Stdin is the write end of the process's standard input.
	Stdin io.WriteCloser
	// Stdout and Stderr are the read ends of its output; read them
	// concurrently, or a process writing more than the pipe holds blocks.
	Stdout io.ReadCloser
	Stderr io.ReadCloser

	h processHandle
}

// Pid returns the process id inside the VM.
func (p *Process) Pid() int { return p.h.pid() }

// Signal sends sig to the process.
func (p *Process) Signal(sig Signal) error { return p.h.signal(sig) }

// Wait waits for the process to exit.
func (p *Process) Wait(ctx context.Context) (*ExitStatus, error) { return p.h.wait(ctx) }

// Resize sets the size of the process's terminal; the job in its
// foreground gets SIGWINCH. A process spawned without PTY has no terminal
// (ENOTTY). Sizes are clamped to 1..65535.
func (p *Process) Resize(rows, cols int) error {
	return p.h.resize(clampSize(rows, 24), clampSize(cols, 80))
}

func clampSize(n, def int) uint16 {
	switch {
	case n <= 0:
		return uint16(def)
	case n > 65535:
		return 65535
	}
	return uint16(n)
}

// Spawn starts argv in the VM with pipes for its standard streams.
func (v *VM) Spawn(ctx context.Context, argv []string, opts *SpawnOptions) (*Process, error) {
	if opts == nil {
		opts = &SpawnOptions{}
	}
	env := opts.Env
	if _, set := env["TERM"]; opts.PTY != nil && !set {
		env = maps.Clone(env)
		if env == nil {
			env = map[string]string{}
		}
		env["TERM"] = cmp.Or(opts.PTY.Term, vmhost.DefaultTerm)
	}
	return v.b.spawn(ctx, argv, mergeEnv(v.env, env), opts)
}
