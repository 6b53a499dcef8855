package secexec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/secexec/secexec/internal/setup"
)

// hostRegistry returns the npm registry URL set-up recorded (the host's
// `npm config get registry`), or "".
func (h *Host) hostRegistry() string {
	dirs, err := setup.DefaultDirs()
	if err != nil {
		return ""
	}
	if r, ok := h.registry.Load(dirs); ok {
		return r.(string)
	}
	r := setup.Registry(dirs)
	if r != "" {
		h.registry.Store(dirs, r)
	}
	return r
}

// NPMRegistry sets the caches up if needed and returns the npm registry
// that guests' npm uses: the host npm's configured registry, recorded at
// set-up and passed to every VM as npm_config_registry. A VM reaches it
// only with a network rule; NPMRegistryRule gives one.
func NPMRegistry(ctx context.Context) (*url.URL, error) { return defaultHost.NPMRegistry(ctx) }

// NPMRegistry is the package function NPMRegistry on this Host: it sets
// the Host's caches up if needed.
func (h *Host) NPMRegistry(ctx context.Context) (*url.URL, error) {
	if _, err := h.ensureSetUp(ctx, h.opts.Logger); err != nil {
		return nil, err
	}
	r := h.hostRegistry()
	if r == "" {
		return nil, fmt.Errorf("secexec: no npm registry recorded at set-up: %w", ErrNoRegistry)
	}
	return url.Parse(r)
}

// ErrNoRegistry is returned by NPMRegistry when set-up recorded none.
var ErrNoRegistry = errors.New("secexec: npm registry unknown")

// NPMRegistryRule returns the network rule ("HOST:PORT") that lets a VM
// reach registry u, for Permissions.AllowNet. As for any host name, it
// opens the addresses the name resolves to except special ranges
// (private, loopback, documentation, ...): a registry mirror at such an
// address needs a rule naming that address too.
func NPMRegistryRule(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}
