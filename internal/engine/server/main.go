package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"

	"github.com/secexec/secexec/internal/engine/metrics"
	"github.com/secexec/secexec/internal/engine/proto"
	"github.com/secexec/secexec/internal/vmhost"
)

// IsEngine reports whether this process was started as an engine by
// client.Start.
func IsEngine() bool { return os.Getenv(proto.EnvMode) != "" }

// Logger returns an engine process's logger: JSON lines on stderr, which
// the client reads and passes on to its own logger (client.Options.Logger),
// at the level the client asked for (proto.EnvLogLevel; warnings and
// errors when unset). Durations are written as text ("1.2ms").
func Logger() *slog.Logger { return slog.New(stderrHandler()) }

func stderrHandler() slog.Handler {
	level := slog.LevelWarn
	if v := os.Getenv(proto.EnvLogLevel); v != "" {
		_ = level.UnmarshalText([]byte(v)) // a bad value keeps the default
	}
	return slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Value.Kind() == slog.KindDuration {
				a.Value = slog.StringValue(a.Value.Duration().String())
			}
			return a
		}})
}

// recordMetrics sets up the engine process's metrics: the Go runtime's
// and the process's own, and the engines' per-exec phase reports, which
// are turned on (metrics.PhasesEnv, read when the runtime starts, on the
// first VM) and taken from the process's default logger, where the
// engines send them. The reports still reach the engine's stderr (and so
// the client's logger) when the user asked for them with the variable;
// other records go there at the client's log level.
func recordMetrics() *metrics.Set {
	set := metrics.New()
	set.ZeroSeries()
	set.RegisterProcess()
	asked := os.Getenv(metrics.PhasesEnv) == "1"
	if !asked {
		_ = os.Setenv(metrics.PhasesEnv, "1")
	}
	slog.SetDefault(slog.New(metrics.NewHandler(stderrHandler(), set.Observe, asked)))
	return set
}

// Main is the body of an engine process: it reads its one-time token from
// the pipe it inherited (proto.TokenFD), hardens the process (see Harden),
// and serves the socket
// it inherited until the client closes it or goes away. It returns nil
// after a clean end.
func Main(ctx context.Context, rt vmhost.Runtime, log *slog.Logger) error {
	if mode := os.Getenv(proto.EnvMode); mode != proto.ModeValue {
		return fmt.Errorf("engine: started for %s=%q, this binary serves %q", proto.EnvMode, mode, proto.ModeValue)
	}
	_ = os.Unsetenv(proto.EnvMode)
	token, err := readToken(proto.TokenFD)
	if err != nil {
		return err
	}
	if err := Harden(proto.EngineFD); err != nil {
		return err
	}
	f := os.NewFile(proto.EngineFD, "secexec-client")
	if f == nil {
		return errors.New("engine: no client socket")
	}
	nc, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		return fmt.Errorf("engine: client socket: %w", err)
	}
	s, err := New(Config{Token: token, OneTime: true, Runtime: rt, Logger: log, Metrics: recordMetrics()})
	if err != nil {
		return err
	}
	return s.ServeConn(ctx, nc)
}

// ErrBadToken is returned by Main when the token descriptor is missing or
// does not hold exactly proto.TokenSize bytes followed by end of file.
var ErrBadToken = errors.New("engine: missing or malformed token")

// readToken reads the token from fd, a pipe whose write end the client
// closed, and closes it: the token exists only in this process's memory,
// never in its environment (which /proc/PID/environ shows for the life of
// the process, os.Unsetenv notwithstanding) or in a descriptor a later
// child could inherit.
func readToken(fd int) ([]byte, error) {
	f := os.NewFile(uintptr(fd), "secexec-token")
	if f == nil {
		return nil, ErrBadToken
	}
	defer f.Close()
	// One byte more than a token: a longer stream is malformed too.
	buf := make([]byte, proto.TokenSize+1)
	n, err := io.ReadFull(f, buf)
	if n != proto.TokenSize || (err != io.ErrUnexpectedEOF && err != nil) {
		return nil, fmt.Errorf("%w (%d bytes)", ErrBadToken, n)
	}
	return buf[:n], nil
}
