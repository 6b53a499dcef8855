package api

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"
)

// ServeOptions configure Serve.
type ServeOptions struct {
	// CertFile and KeyFile, if set, serve HTTPS (TLS 1.2 or later).
	CertFile, KeyFile string
	// DrainTimeout bounds the graceful shutdown (default 30 s): requests
	// and sessions still running then are cut and the VMs closed.
	DrainTimeout time.Duration
	// Ready, if set, is called once the listener serves.
	Ready func()
	// Terminal, if set, serves the browser terminal page below
	// /terminal/ (see internal/termpage), beside the API.
	Terminal http.Handler
}

// Serve serves s on ln until ctx ends, then shuts down gracefully:
// /readyz turns 503 and new work is refused, the listener closes,
// in-flight requests and sessions get DrainTimeout to finish, and every
// VM is closed.
func Serve(ctx context.Context, ln net.Listener, s *Server, o ServeOptions) error {
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 30 * time.Second
	}
	var h http.Handler = s
	if o.Terminal != nil {
		mux := http.NewServeMux()
		mux.Handle("/terminal/", o.Terminal)
		mux.Handle("/", s)
		h = mux
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	if o.CertFile != "" || o.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			_ = ln.Close()
			return err
		}
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	if o.Ready != nil {
		o.Ready()
	}
	select {
	case err := <-done:
		_ = s.Shutdown(context.Background())
		return err
	case <-ctx.Done():
	}
	s.cfg.Logger.Info("draining", "timeout", o.DrainTimeout)
	dctx, cancel := context.WithTimeout(context.Background(), o.DrainTimeout)
	defer cancel()
	s.beginDrain()
	errHTTP := srv.Shutdown(dctx)
	errAPI := s.Shutdown(dctx)
	if errHTTP != nil {
		_ = srv.Close()
	}
	if errHTTP != nil || errAPI != nil {
		// Work still running at the deadline was cut: the shutdown
		// itself went as configured.
		s.cfg.Logger.Warn("drain timed out; running requests and sessions were cut", "timeout", o.DrainTimeout)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ReplicaName turns an address or name into a replica name: lower case,
// with dots and colons as dashes, so a pod IP 10.1.2.3 becomes
// "10-1-2-3" — the name a headless Service's DNS gives that endpoint.
func ReplicaName(s string) string {
	return strings.NewReplacer(".", "-", ":", "-").Replace(strings.ToLower(s))
}

// PeerTemplate returns a Config.PeerURL that substitutes the replica for
// {replica} in tmpl, e.g.
// "http://{replica}.secexec-peers.default.svc.cluster.local:8080".
func PeerTemplate(tmpl string) func(string) (string, bool) {
	if tmpl == "" || !strings.Contains(tmpl, "{replica}") {
		return nil
	}
	return func(replica string) (string, bool) {
		if !replicaName.MatchString(replica) {
			return "", false
		}
		return strings.ReplaceAll(tmpl, "{replica}", replica), true
	}
}
