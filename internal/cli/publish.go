package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/secexec/secexec"
)

// publication is one --publish HOSTPORT:GUESTPORT (or
// HOST:HOSTPORT:GUESTPORT): a listener on the host whose connections are
// carried to the guest's listener on GUESTPORT.
type publication struct {
	hostAddr  string
	guestPort int
}

// parsePublish reads "HOSTPORT:GUESTPORT" (host 127.0.0.1) or
// "HOST:HOSTPORT:GUESTPORT". Only loopback hosts are accepted unless
// allowRemote: a sandbox's server should not face the network by accident.
func parsePublish(s string, allowRemote bool) (publication, error) {
	bad := func() (publication, error) {
		return publication{}, &usageError{err: fmt.Errorf("--publish %q: want [HOST:]HOSTPORT:GUESTPORT", s)}
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return bad()
	}
	guest, err := strconv.Atoi(s[i+1:])
	if err != nil || guest <= 0 || guest > 65535 {
		return bad()
	}
	host, port := "127.0.0.1", s[:i]
	if j := strings.LastIndexByte(port, ':'); j >= 0 {
		host, port = strings.Trim(port[:j], "[]"), port[j+1:]
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return bad()
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) && !allowRemote {
		return publication{}, &usageError{err: fmt.Errorf("--publish %q: the host address must be loopback (or pass --allow-non-loopback)", s)}
	}
	return publication{hostAddr: net.JoinHostPort(host, port), guestPort: guest}, nil
}

// publish serves each publication until ctx ends; it returns once every
// listener is open (or one failed to open).
func publish(ctx context.Context, vm *secexec.VM, pubs []publication, log *slog.Logger) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
	}
	for _, p := range pubs {
		ln, err := new(net.ListenConfig).Listen(ctx, "tcp", p.hostAddr)
		if err != nil {
			stop()
			return nil, fmt.Errorf("--publish: %w", err)
		}
		stops = append(stops, publishOn(ctx, vm, ln, p.guestPort, log))
	}
	return stop, nil
}

// publishOn carries every connection ln accepts to the guest's port until
// ctx ends or stop is called; stop closes ln and returns once every
// connection it carried is closed.
func publishOn(ctx context.Context, vm *secexec.VM, ln net.Listener, guestPort int, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				forward(ctx, vm, c, guestPort, log)
			}()
		}
	}()
	return func() {
		cancel()
		_ = ln.Close()
		wg.Wait()
	}
}

// forward carries one host connection to the guest's port, both ways,
// half-closes included.
func forward(ctx context.Context, vm *secexec.VM, c net.Conn, port int, log *slog.Logger) {
	defer c.Close()
	g, err := vm.Net().Dial(ctx, port)
	if err != nil {
		log.Debug("publish: guest refused", "port", port, "err", err)
		return
	}
	defer g.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.Close(); _ = g.Close() })
	defer stop()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(g, c)
		if cw, ok := g.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		close(done)
	}()
	_, _ = io.Copy(c, g)
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	<-done
}
