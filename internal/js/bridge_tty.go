package js

import (
	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel/errno"
)

// The terminal calls of node's tty module and of process.stdin/stdout:
// isatty, raw mode and the window size act on the kernel's PTY behind a
// descriptor, the same terminal a WebAssembly program on that fd sees.
func init() {
	register("isatty", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		fd, err := argInt(args, 0)
		if err != nil {
			return r.boolean(false), nil
		}
		return r.boolean(r.p.IsTerminal(fd)), nil
	})
	register("ttySetRaw", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		fd, err := argInt(args, 0)
		if err != nil {
			return nil, errno.EINVAL
		}
		return nil, r.p.SetTerminalRaw(fd, argBool(args, 1))
	})
	// ttySize puts the window size of fd's terminal as [cols, rows] at
	// the start of the scratch buffer.
	register("ttySize", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		fd, err := argInt(args, 0)
		if err != nil {
			return nil, errno.EINVAL
		}
		ws, err := r.p.TerminalSize(fd)
		if err != nil {
			return nil, err
		}
		r.putF64(float64(ws.Cols), float64(ws.Rows))
		return nil, nil
	})
}
