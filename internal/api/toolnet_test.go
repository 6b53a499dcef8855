package api

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

// TestToolNet: special addresses are refused in every spelling unless an
// operator's prefix holds them; a name is checked by what it resolves to,
// and the dial goes to the checked address.
func TestToolNet(t *testing.T) {
	strict := &toolNet{}
	for _, h := range []string{"127.0.0.1", "0x7f.1", "2130706433", "::ffff:127.0.0.1", "169.254.169.254", "10.1.2.3", "::1", "fe80::1", "0.0.0.0"} {
		if !strict.literalRefused(h) {
			t.Errorf("%s allowed", h)
		}
	}
	if strict.literalRefused("93.184.216.34") || strict.literalRefused("example.com") {
		t.Error("a public address or a name refused at creation")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	if _, err := strict.dial(context.Background(), "tcp", net.JoinHostPort("localhost", port)); !errors.Is(err, errToolAddr) {
		t.Fatalf("dial localhost without an allowance: %v", err)
	}
	open := &toolNet{allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	c, err := open.dial(context.Background(), "tcp", net.JoinHostPort("localhost", port))
	if err != nil {
		t.Fatalf("dial localhost with 127.0.0.0/8 allowed: %v", err)
	}
	if got := c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap(); got != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("dialled %v", got)
	}
	c.Close()
	if _, err := ParseToolNetworks([]string{"10.0.0.0/8", "::1", "192.168.1.7"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseToolNetworks([]string{"ten"}); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad network: %v", err)
	}
}
