package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/secexec/secexec"
)

func newMetricsCmd() *cobra.Command {
	var (
		listen      string
		allowRemote bool
	)
	c := &cobra.Command{
		Use:   "metrics [flags]",
		Short: "Print or serve the engine's Prometheus metrics",
		Long: `Print the metrics of this process's shared engine in the Prometheus text
exposition format: per-phase exec durations (V8 and WebAssembly), the V8
warm pool's hits and misses, the compiled WebAssembly module cache's hits
and misses, Run outcomes, and the engine process's own figures.

With --listen ADDR it instead serves them as GET /metrics over HTTP until
interrupted. ADDR is host:port; an empty host means 127.0.0.1. Only
loopback addresses are accepted unless --allow-non-loopback is given: the
metrics describe what the sandbox runs.`,
		Example: `  secexec metrics
  secexec metrics --listen 127.0.0.1:9464`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if listen == "" {
				if allowRemote {
					return &usageError{err: errors.New("--allow-non-loopback needs --listen")}
				}
				return secexec.Metrics(ctx, cmd.OutOrStdout())
			}
			addr, err := listenAddr(listen, allowRemote)
			if err != nil {
				return &usageError{err: err}
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "secexec: serving metrics on http://%s/metrics\n", ln.Addr())
			return serveMetrics(ctx, ln)
		},
	}
	fl := c.Flags()
	fl.StringVar(&listen, "listen", "", "serve GET /metrics over HTTP on this host:port instead of printing once")
	fl.BoolVar(&allowRemote, "allow-non-loopback", false, "let --listen bind an address other than loopback")
	return c
}

// listenAddr checks a --listen address: host:port with a loopback IP or
// "localhost" as the host (an empty host is 127.0.0.1), any IP with
// allowRemote. Host names other than localhost are refused: what they
// resolve to can change.
func listenAddr(s string, allowRemote bool) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("--listen %q: %w", s, err)
	}
	switch host {
	case "":
		host = "127.0.0.1"
	case "localhost":
	default:
		ip := net.ParseIP(host)
		if ip == nil {
			return "", fmt.Errorf("--listen %q: the host must be an IP address or localhost", s)
		}
		if !ip.IsLoopback() && !allowRemote {
			return "", fmt.Errorf("--listen %q is not a loopback address (add --allow-non-loopback to serve it)", s)
		}
	}
	return net.JoinHostPort(host, port), nil
}

// scrapeTimeout bounds one /metrics request.
const scrapeTimeout = 10 * time.Second

// metricsHandler serves GET (and HEAD) /metrics from the shared engine.
func metricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), scrapeTimeout)
		defer cancel()
		var buf bytes.Buffer
		if err := secexec.Metrics(ctx, &buf); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = io.Copy(w, &buf)
	})
	return mux
}

// serveMetrics serves the metrics on ln until ctx ends.
func serveMetrics(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           metricsHandler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    16 << 10,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
