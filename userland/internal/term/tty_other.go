//go:build !wasip1

package term

import (
	"fmt"
	"os"

	xterm "golang.org/x/term"
)

// IsTerminal reports whether fd is a terminal.
func IsTerminal(fd int) bool { return xterm.IsTerminal(fd) }

// Open puts standard input, which must be a terminal, in raw mode (the
// host build is for trying the programs out; the VM runs the wasip1
// build). data is always nil.
func Open() (t *TTY, data *os.File, err error) {
	st, err := xterm.MakeRaw(0)
	if err != nil {
		return nil, nil, fmt.Errorf("raw mode: %w", err)
	}
	return &TTY{st: st}, nil, nil
}

// TTY is the terminal in raw mode.
type TTY struct{ st *xterm.State }

// Read reads keys from the terminal.
func (t *TTY) Read(p []byte) (int, error) { return os.Stdin.Read(p) }

// Restore leaves raw mode.
func (t *TTY) Restore() { _ = xterm.Restore(0, t.st) }
