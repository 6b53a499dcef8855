package wasm

import (
	"context"

	"github.com/secexec/secexec/software"
)

// Precompile compiles a software command's module into the engine's
// caches (in memory, and wazero's cache on disk when the engine has a
// cache directory), so that its first run, in any process sharing the
// directory, does not pay for compilation. Set-up uses it for large
// modules it has just fetched (CPython's takes tens of seconds).
func (e *Engine) Precompile(ctx context.Context, c software.Command) error {
	if !e.enter() {
		return ErrClosed
	}
	defer e.exit()
	ent, err := e.mods.get(ctx, c.Fingerprint, c.Module)
	if err != nil {
		return err
	}
	e.mods.release(ent)
	return nil
}
