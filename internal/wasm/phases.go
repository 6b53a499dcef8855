package wasm

import (
	"context"
	"log/slog"
	"os"
	"path"
	"time"
)

// phases times one exec of a module, reported at info level when
// SECEXEC_SESSION_PHASES=1 (read when the Engine starts).
type phases struct {
	// lookup is finding the compiled module (fingerprint, cache), not
	// counting compile, which is the compilation this exec waited for
	// (zero on a cache hit).
	lookup, compile, instantiate, run time.Duration
	// cache is how the compiled-module lookup went (see program.cache).
	cache string
	// prestarted is set when the process claimed a parked instance
	// (prestart.go): no instantiate phase of its own.
	prestarted bool
}

func phasesOn() bool { return os.Getenv("SECEXEC_SESSION_PHASES") == "1" }

func (e *Engine) reportPhases(ph *phases, pid int, argv []string) {
	if !e.phases {
		return
	}
	name := ""
	if len(argv) > 0 {
		name = path.Base(argv[0])
	}
	// For the host's operator: when the engine's logger does not show
	// info (guest.Runtime passes a discarding one), the host process's
	// default logger gets the report. Never the guest.
	ctx := context.Background()
	log := e.log
	if !log.Enabled(ctx, slog.LevelInfo) {
		log = slog.Default()
	}
	log.LogAttrs(ctx, slog.LevelInfo, "wasm: session phases",
		slog.Int("pid", pid), slog.String("command", name), slog.String("module_cache", ph.cache),
		slog.Duration("module_lookup", ph.lookup), slog.Duration("compile", ph.compile),
		slog.Duration("instantiate", ph.instantiate), slog.Bool("prestarted", ph.prestarted), slog.Duration("run", ph.run))
}
