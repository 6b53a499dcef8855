// Package hostproc is the Go userland's way to start and wait for other
// guest programs: the agentOS host_process functions (posix_spawn with
// file actions, waitpid, kill, pipes, close-on-exec), which secexec's
// WebAssembly host implements over its kernel. Go's os/exec cannot run on
// wasip1; these calls are what the shell and make use instead.
//
// Outside wasip1 every call fails with ErrUnsupported, so the packages
// that use it still build (and their host-side unit tests run) on the
// developer's machine.
package hostproc

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrUnsupported is returned on a platform without the host_process
// imports.
var ErrUnsupported = errors.New("hostproc: not supported on this platform")

// Action is one posix_spawn file action, applied in order in the child
// before it starts (agentOS ABI §7.1.1).
type Action struct {
	Op   ActionOp
	FD   int    // descriptor in the child
	Src  int    // Dup2 source, in the parent's table
	Flag int    // Open: Linux open(2) flags
	Mode uint32 // Open: creation mode
	Path string // Open, Chdir
}

// ActionOp is a file action's opcode.
type ActionOp uint32

// The file action opcodes of proc_spawn_v3.
const (
	Close     ActionOp = 1
	Dup2      ActionOp = 2
	Open      ActionOp = 3
	Chdir     ActionOp = 4
	Fchdir    ActionOp = 5
	CloseFrom ActionOp = 6
)

// Attr is what a spawn needs besides the program and its arguments.
type Attr struct {
	Env     []string // the child's whole environment
	Dir     string   // working directory; "" inherits the caller's
	Actions []Action
}

// Status is how a child ended.
type Status struct {
	Code   int // exit status, 0-255; 0 when killed
	Signal int // terminating signal, 0 if it exited
}

// ExitCode is the status a shell reports for it: the exit code, or 128+n
// for a child killed by signal n.
func (s Status) ExitCode() int {
	if s.Signal != 0 {
		return 128 + s.Signal
	}
	return s.Code
}

// encodeActions packs actions as proc_spawn_v3 reads them.
func encodeActions(acts []Action) []byte {
	var b []byte
	for _, a := range acts {
		var rec [24]byte
		le32(rec[0:], uint32(a.Op))
		le32(rec[4:], uint32(int32(a.FD)))
		le32(rec[8:], uint32(int32(a.Src)))
		le32(rec[12:], uint32(int32(a.Flag)))
		le32(rec[16:], a.Mode)
		le32(rec[20:], uint32(len(a.Path)))
		b = append(b, rec[:]...)
		b = append(b, a.Path...)
	}
	return b
}

func le32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// encodeList joins strings as NUL-terminated entries.
func encodeList(list []string) ([]byte, error) {
	var b []byte
	for _, s := range list {
		for i := 0; i < len(s); i++ {
			if s[i] == 0 {
				return nil, fmt.Errorf("hostproc: %q contains a NUL byte: %w", s, syscall.EINVAL)
			}
		}
		b = append(b, s...)
		b = append(b, 0)
	}
	return b, nil
}
