package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/secexec/secexec"
)

func newShellCmd() *cobra.Command {
	var vf vmFlags
	c := &cobra.Command{
		Use:   "shell [flags] [--] [CMD [ARG...]]",
		Short: "Open an interactive terminal in a fresh VM",
		Long: `Open an interactive terminal in a fresh VM: this terminal becomes the
guest's (raw mode, restored on exit), running bash by default, or the
command given (e.g. node, for its REPL). secexec's flags come first: the
first argument that is not a flag, or "--", starts the guest's command,
whose own flags follow it. Window size changes are passed on. The exit
status is the guest command's.`,
		Example: `  secexec shell
  secexec shell --mount .:/work -- bash
  secexec shell -- node`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"bash"}
			}
			return runTerminal(cmd, &vf, args)
		},
	}
	vf.register(c)
	guestCommandLine(c)
	return c
}

// hostTerminal is the CLI's own terminal: raw mode while a guest runs on
// it, restored exactly once on every way out (return, panic, signal).
type hostTerminal struct {
	fd    int
	mu    sync.Mutex
	state *term.State
}

func (h *hostTerminal) makeRaw() error {
	st, err := term.MakeRaw(h.fd)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.state = st
	h.mu.Unlock()
	return nil
}

func (h *hostTerminal) restore() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state != nil {
		_ = term.Restore(h.fd, h.state)
		h.state = nil
	}
}

// size returns the host terminal's window size, or 24x80.
func termSize(fd int) (rows, cols int) {
	if w, h, err := term.GetSize(fd); err == nil && w > 0 && h > 0 {
		return h, w
	}
	return 24, 80
}

// termProcess is a process on a VM terminal: a local VM's or a
// server's.
type termProcess interface {
	keys() io.WriteCloser
	screen() io.ReadCloser
	resize(rows, cols int)
	kill()
	// wait returns the exit code.
	wait(ctx context.Context) (int, error)
}

// localTerm is a termProcess of a local VM.
type localTerm struct{ p *secexec.Process }

func (t localTerm) keys() io.WriteCloser  { return t.p.Stdin }
func (t localTerm) screen() io.ReadCloser { return t.p.Stdout }
func (t localTerm) resize(rows, cols int) { _ = t.p.Resize(rows, cols) }
func (t localTerm) kill()                 { _ = t.p.Signal(secexec.SIGKILL) }
func (t localTerm) wait(ctx context.Context) (int, error) {
	st, err := t.p.Wait(ctx)
	if err != nil {
		return 0, err
	}
	return st.ExitCode, nil
}

// runTerminal runs argv on a VM terminal wired to this process's stdin
// and stdout: `secexec shell` and `secexec exec -t`.
func runTerminal(cmd *cobra.Command, vf *vmFlags, argv []string) (err error) {
	c, err := remoteOf(cmd)
	if err != nil {
		return err
	}
	if c == nil {
		if err := vf.localVM(); err != nil {
			return err
		}
	}
	var opts secexec.Options
	if c == nil {
		if opts, err = vf.options(cmd); err != nil {
			return err
		}
	}
	ctx := cmd.Context()
	in, out := cmd.InOrStdin(), cmd.OutOrStdout()
	inFd, outFd := -1, -1
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		inFd = int(f.Fd())
	}
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		outFd = int(f.Fd())
	}
	sizeFd := outFd
	if sizeFd < 0 {
		sizeFd = inFd
	}
	rows, cols := termSize(sizeFd)

	// The guest's terminal is this one: same TERM, same size.
	var p termProcess
	var vm *secexec.VM // the local VM, saved by --save-snapshot
	if c != nil {
		rp, done, err := spawnRemoteTerm(cmd, c, vf, argv, rows, cols)
		if err != nil {
			return err
		}
		defer done()
		p = rp
	} else {
		if vm, err = secexec.NewVM(ctx, opts); err != nil {
			return err
		}
		defer vm.Close()
		lp, err := vm.Spawn(ctx, argv, &secexec.SpawnOptions{PTY: &secexec.PTY{Rows: rows, Cols: cols, Term: os.Getenv("TERM")}})
		if err != nil {
			return err
		}
		p = localTerm{lp}
	}

	host := &hostTerminal{fd: inFd}
	if inFd >= 0 {
		if err := host.makeRaw(); err != nil {
			p.kill()
			return err
		}
	}
	// The terminal is restored on return and on a panic of this
	// goroutine; the signal watcher below restores it when the CLI is
	// told to stop, and losing the engine only ends the streams, which
	// returns here.
	defer host.restore()
	defer func() {
		if r := recover(); r != nil {
			host.restore()
			panic(r)
		}
	}()

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGWINCH, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, os.Interrupt)
	defer signal.Stop(sigs)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case s := <-sigs:
				if s == syscall.SIGWINCH {
					if sizeFd >= 0 {
						r, c := termSize(sizeFd)
						p.resize(r, c)
					}
					continue
				}
				if s == os.Interrupt && inFd >= 0 {
					// A ^C in raw mode reaches the guest as a key; an
					// interrupt from elsewhere is passed on as one.
					_, _ = p.keys().Write([]byte{0x03})
					continue
				}
				host.restore()
				p.kill()
			}
		}
	}()

	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		_, _ = io.Copy(out, p.screen())
	}()
	go func() {
		_, _ = io.Copy(p.keys(), in)
	}()

	code, werr := p.wait(context.WithoutCancel(ctx))
	// What the program wrote last is still on its way; jobs it left on
	// the terminal get no more than a moment to let go of it.
	select {
	case <-outDone:
	case <-time.After(2 * time.Second):
	}
	_ = p.screen().Close()
	_ = p.keys().Close()
	host.restore()
	if werr != nil {
		if errors.Is(werr, context.Canceled) {
			return &exitError{code: 130}
		}
		return werr
	}
	if vm != nil {
		if err := vf.saveSnapshotOf(cmd, vm); err != nil {
			return err
		}
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}
