//go:build wasip1

package term

import (
	"fmt"
	"os"
	"syscall"

	"github.com/secexec/secexec/userland/internal/hostproc"
)

//go:wasmimport wasi_snapshot_preview1 fd_renumber
func fdRenumber(from, to uint32) uint32

// IsTerminal reports whether fd is a terminal.
func IsTerminal(fd int) bool { return hostproc.IsTerminal(fd) }

// MoveStdin makes the controlling terminal (/dev/tty) descriptor 0,
// where a program reads keys and sets the terminal's modes, and returns
// what standard input was, moved to another descriptor: less reading a
// pipe takes its keys from the terminal.
func MoveStdin() (*os.File, error) {
	// syscall.Open, not os.OpenFile: the descriptor is renumbered below,
	// and an *os.File would close its old number later.
	fd, err := syscall.Open("/dev/tty", syscall.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the terminal: %w", err)
	}
	moved, err := hostproc.Dup(0)
	if err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("moving standard input: %w", err)
	}
	if e := fdRenumber(uint32(fd), 0); e != 0 {
		_ = syscall.Close(fd)
		_ = syscall.Close(moved)
		return nil, fmt.Errorf("making the terminal standard input: %w", syscall.Errno(e))
	}
	return os.NewFile(uintptr(moved), "stdin"), nil
}
