//go:build !wasip1

package term

import (
	"errors"
	"os"
)

// Outside WASI (the host-side unit tests) no descriptor is a terminal,
// as in userland/tools: the terminal code paths are tested in a VM.

// IsTerminal reports whether fd is a terminal: never here.
func IsTerminal(int) bool { return false }

// MoveStdin fails: there is no controlling terminal to move.
func MoveStdin() (*os.File, error) { return nil, errors.New("no terminal") }
