package main

import (
	"fmt"
	"io"
	"os"

	"github.com/secexec/secexec/userland/internal/term"
)

// less, more and vi put the terminal in raw mode with host_tty's
// get_attr and set_attr (tcgetattr and tcsetattr on descriptor 0, as vim
// and less do), not host_tty.set_raw_mode: that call is brush's and
// marks its caller as the terminal's shell (internal/wasm's shellArgv).

// rawTerminal is standard input, a terminal, in raw mode; restore puts
// back the settings it had.
type rawTerminal struct {
	saved termios
}

// makeRaw sets cfmakeraw(3)'s settings on descriptor 0.
func makeRaw() (*rawTerminal, error) {
	saved, err := termGetAttr(0)
	if err != nil {
		return nil, fmt.Errorf("reading the terminal's settings: %w", err)
	}
	raw := saved
	raw.Iflag &^= sIGNBRK | sBRKINT | sPARMRK | sISTRIP | sINLCR | sIGNCR | sICRNL | sIXON
	raw.Oflag &^= sOPOST
	raw.Lflag &^= sECHO | sECHONL | sICANON | sISIG | sIEXTEN
	raw.Cflag = raw.Cflag&^(sCSIZE|sPARENB) | sCS8
	raw.Cc[cVMIN], raw.Cc[cVTIME] = 1, 0
	// TCSADRAIN: what was written before reaches the screen first, and
	// keys typed ahead are kept.
	if err := termSetAttr(0, 1, raw); err != nil {
		return nil, fmt.Errorf("raw mode: %w", err)
	}
	return &rawTerminal{saved: saved}, nil
}

func (r *rawTerminal) restore() { _ = termSetAttr(0, 1, r.saved) }

// Read reads keys from the terminal.
func (r *rawTerminal) Read(p []byte) (int, error) { return os.Stdin.Read(p) }

// openTerminal puts the terminal in raw mode for a full-screen tool.
// When standard input is not the terminal (less reading a pipe), the
// controlling terminal takes its place first and data is the input moved
// elsewhere (see term.MoveStdin); otherwise data is nil.
func openTerminal(stdin io.Reader) (*rawTerminal, io.Reader, error) {
	var data io.Reader
	if !isTerminalReader(stdin) {
		f, err := term.MoveStdin()
		if err != nil {
			return nil, nil, err
		}
		data = f
	}
	r, err := makeRaw()
	if err != nil {
		return nil, nil, err
	}
	return r, data, nil
}

// windowSize is the terminal's size now: host_tty.get_size on standard
// output (read again at every redraw, so a resized window is followed),
// else LINES and COLUMNS, else 24 by 80.
func windowSize() (rows, cols int) {
	if r, c, err := termSize(1); err == nil && r > 0 && c > 0 {
		return r, c
	}
	return term.Size()
}
