//go:build wasip1

package term

import (
	"fmt"
	"os"
	"syscall"

	"github.com/secexec/secexec/userland/internal/hostproc"
)

// Raw mode is the agentOS host_tty.set_raw_mode call; it acts on
// standard input, which must be the terminal. Keys are read with plain
// fd_read: host_tty.read (a timed read) is left to the interactive shell
// (brush), the one module the engine recognises by that import.

//go:wasmimport host_tty set_raw_mode
func hostSetRawMode(on uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_renumber
func fdRenumber(from, to uint32) uint32

// IsTerminal reports whether fd is a terminal.
func IsTerminal(fd int) bool { return hostproc.IsTerminal(fd) }

// Open puts the terminal in raw mode and returns it. When standard input
// is not the terminal (less reading a pipe), the controlling terminal
// /dev/tty takes its place as descriptor 0, since raw mode applies to
// standard input, and data is the original standard input moved to
// another descriptor; otherwise data is nil.
func Open() (t *TTY, data *os.File, err error) {
	if !hostproc.IsTerminal(0) {
		// syscall.Open, not os.OpenFile: the descriptor is renumbered
		// below, and an *os.File would close its old number later.
		fd, err := syscall.Open("/dev/tty", syscall.O_RDWR, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("opening the terminal: %w", err)
		}
		moved, err := hostproc.Dup(0)
		if err != nil {
			_ = syscall.Close(fd)
			return nil, nil, fmt.Errorf("moving standard input: %w", err)
		}
		if e := fdRenumber(uint32(fd), 0); e != 0 {
			_ = syscall.Close(fd)
			_ = syscall.Close(moved)
			return nil, nil, fmt.Errorf("making the terminal standard input: %w", syscall.Errno(e))
		}
		data = os.NewFile(uintptr(moved), "stdin")
	}
	if e := hostSetRawMode(1); e != 0 {
		return nil, nil, fmt.Errorf("raw mode: %w", syscall.Errno(e))
	}
	return &TTY{}, data, nil
}

// TTY is the terminal in raw mode.
type TTY struct{}

// Read reads keys from the terminal. It goes through os.Stdin, not
// syscall.Read: Go's wasip1 port makes standard input non-blocking and
// waits for it with poll_oneoff.
func (t *TTY) Read(p []byte) (int, error) { return os.Stdin.Read(p) }

// Restore leaves raw mode.
func (t *TTY) Restore() { hostSetRawMode(0) }
