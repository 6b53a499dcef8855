package js

import v8 "github.com/tommie/v8go"

// The terminal calls of node's tty module and of process.stdin/stdout:
// isatty, raw mode and the window size act on the kernel's PTY behind a
// descriptor, the same terminal a WebAssembly program on that fd sees.

func bridgeIsatty(r *rt, a *callArgs) (*v8.Value, error) {
	return r.boolean(r.p.IsTerminal(a.int(0))), nil
}

func bridgeTtySetRaw(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.p.SetTerminalRaw(a.int(0), a.bool(1))
}

// bridgeTtySize puts the window size of fd's terminal as [cols, rows] at
// the start of the scratch buffer.
func bridgeTtySize(r *rt, a *callArgs) (*v8.Value, error) {
	ws, err := r.p.TerminalSize(a.int(0))
	if err != nil {
		return nil, err
	}
	r.putF64(float64(ws.Cols), float64(ws.Rows))
	return nil, nil
}
