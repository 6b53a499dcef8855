package netstack_test

import (
	"context"
	"net/netip"
	"slices"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/policy"
)

// mapResolver answers from a table.
type mapResolver map[string][]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := m[host]; ok {
		return a, nil
	}
	return nil, errno.ENOENT
}

// A guest that resolved a name itself (python's getaddrinfo, then
// connect to one address) connects to that address under the name's
// permission, but only if the name still resolves to it: an address of
// its own choosing is checked as a plain address.
func TestConnectPinnedThroughName(t *testing.T) {
	// Public addresses: the dial hook refuses them before any packet.
	a1, a2 := netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("93.184.216.35")
	e := newEnv(t, policy.DenyAll().AllowNet("pinned.test:443"),
		withResolver(mapResolver{"pinned.test": {a1, a2}}))
	ctx := ctxT(t)
	connect := func(a netstack.Addr) error {
		s := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
		defer s.DecRef()
		return s.Connect(ctx, a)
	}
	pinned := netstack.Addr{Family: netstack.AFInet, Name: "pinned.test", IP: netip.AddrPortFrom(a2, 443)}
	wantErrno(t, "pinned", connect(pinned), errno.EHOSTUNREACH) // the hook's answer: it was dialled
	if d := e.dialed(); !slices.Equal(d, []string{"tcp 93.184.216.35:443"}) {
		t.Fatalf("dialled %q", d)
	}
	// An address the name does not resolve to is not covered by it.
	other := pinned
	other.IP = netip.AddrPortFrom(netip.MustParseAddr("93.184.216.99"), 443)
	wantErrno(t, "not the name's", connect(other), errno.EACCES)
	// Nor is the name's address without the name, or on another port.
	wantErrno(t, "plain", connect(netstack.InetAddr(netip.AddrPortFrom(a2, 443))), errno.EACCES)
	wrongPort := pinned
	wrongPort.IP = netip.AddrPortFrom(a2, 80)
	wantErrno(t, "port", connect(wrongPort), errno.EACCES)
	if d := e.dialed(); len(d) != 1 {
		t.Fatalf("dialled %q", d)
	}
}
