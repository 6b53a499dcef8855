package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/secexec/secexec/kernel/netstack"
)

// errToolAddr is the (logged, never shown) error of a tool callback to an
// address the operator did not open.
var errToolAddr = errors.New("api: tool callback address not allowed")

// toolNet decides where tool callbacks may go: a public address, or a
// special one (netstack.SpecialScope: loopback, private, link-local and
// cloud metadata, CGNAT, multicast, reserved, IPv6 forms that embed
// IPv4) only inside a prefix the operator allowed (--allow-tool-network).
// It is the rule guests' connects follow: "the internet" is not the
// host's own networks.
type toolNet struct {
	allow []netip.Prefix
}

// allowed reports whether a callback may connect to a.
func (n *toolNet) allowed(a netip.Addr) bool {
	a = a.Unmap()
	if _, special := netstack.SpecialScope(a); !special {
		return true
	}
	for _, p := range n.allow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// resolve returns the first allowed address of host, parsing every IP
// spelling a resolver would accept (netstack.ParseHost) before looking
// the name up, so that "0x7f.1" cannot pass for a name.
func (n *toolNet) resolve(ctx context.Context, host string) (netip.Addr, error) {
	a, isIP, err := netstack.ParseHost(host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%w: host %q: %v", errToolAddr, host, err)
	}
	addrs := []netip.Addr{a}
	if !isIP {
		if addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil {
			return netip.Addr{}, err
		}
	}
	for _, a := range addrs {
		if n.allowed(a) {
			return a.Unmap(), nil
		}
	}
	return netip.Addr{}, fmt.Errorf("%w: %s resolves to %v", errToolAddr, host, addrs)
}

// dial connects to addr (host:port) through the checked address: the
// name is resolved once, the connection goes to the address that was
// checked (no second lookup a rebinding DNS server could answer
// differently), and the dialer's Control hook checks the socket's
// destination again just before connect.
func (n *toolNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ip, err := n.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{
		Timeout: toolTimeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || ap.Addr().Unmap() != ip || !n.allowed(ap.Addr()) {
				return fmt.Errorf("%w: connect to %s", errToolAddr, address)
			}
			return nil
		},
	}
	return d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
}

// client is the HTTP client of tool callbacks: no proxy from the
// environment (it would dial for us, unchecked), every connection
// through dial, and no redirects (a 3xx is a failed call).
func (n *toolNet) client() *http.Client {
	return &http.Client{
		Timeout: toolTimeout,
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           n.dial,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          16,
			IdleConnTimeout:       30 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: toolTimeout,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// literalRefused reports whether host is an IP address (in any spelling)
// that callbacks may not reach, so a VM naming one is refused at
// creation; names are checked at each call.
func (n *toolNet) literalRefused(host string) bool {
	a, isIP, err := netstack.ParseHost(host)
	return err != nil || (isIP && !n.allowed(a))
}

// ParseToolNetworks parses --allow-tool-network values: CIDR prefixes
// or single addresses.
func ParseToolNetworks(ss []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range ss {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%w: tool network %q is not a CIDR prefix or an address", ErrConfig, s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
