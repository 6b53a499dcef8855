package policy

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
)

func TestNetMatching(t *testing.T) {
	type tc struct {
		op   NetOp
		host string
		port int
		want bool
	}
	c := func(host string, port int, want bool) tc { return tc{NetConnect, host, port, want} }
	tests := []struct {
		pattern string
		cases   []tc
	}{
		{"example.com", []tc{c("example.com", 80, true), c("EXAMPLE.Com", 1, true), c("example.com.", 443, true),
			c("a.example.com", 80, false), c("example.co", 80, false), c("example.com..", 80, false), c("xexample.com", 80, false)}},
		{"*.example.com", []tc{c("a.example.com", 80, true), c("A-1.example.com", 80, true), c("a.b.example.com", 80, false),
			c("example.com", 80, false), c("evilexample.com", 80, false)}},
		{"**.example.com", []tc{c("example.com", 80, true), c("a.example.com", 80, true), c("a.b.c.example.com", 80, true),
			c("evilexample.com", 80, false), c("example.com.evil", 80, false)}},
		{"api-?.example.com", []tc{c("api-1.example.com", 80, true), c("api-12.example.com", 80, false)}},
		{"example.com:443", []tc{c("example.com", 443, true), c("example.com", 80, false), c("example.com", -1, false),
			{NetDNS, "example.com", 0, true}, {NetDNS, "example.com", -5, true}}},
		{"example.com:8000-8999", []tc{c("example.com", 8000, true), c("example.com", 8999, true), c("example.com", 7999, false),
			c("example.com", 9000, false)}},
		{"example.com:*", []tc{c("example.com", 0, true), c("example.com", 65535, true), c("example.com", 65536, false)}},
		{"*:443", []tc{c("anything.test", 443, true), c("::1", 443, true), c("1.2.3.4", 443, true), c("1.2.3.4", 444, false)}},
		{"*", []tc{c("localhost", 1, true), c("::1", 1, true), c("[::1]", 1, true), c("10.0.0.1", 1, true),
			c("", 1, false), c("exa mple.com", 1, false), c("a..b", 1, false), c(".a", 1, false), c("a_b.test", 1, true),
			c("fe80::1%eth0", 1, false), c("[fe80::1%25eth0]", 1, false), c("[::1", 1, false), c("[1.2.3.4]", 1, false),
			c("ex\x00ample.com", 1, false), c("exämple.com", 1, false), c("a:b", 1, false),
			c(strings.Repeat("a", 64)+".test", 1, false), c(strings.Repeat("a.", 127)+"test", 1, false),
			c("example.com", 65536, false), c("example.com", -1, false)}},
		// Numeric names are IPv4 to resolvers: they are denied, never matched as names.
		{"*", []tc{c("127.1", 1, false), c("2130706433", 1, false), c("0x7f.0.0.1", 1, false), c("0x7f000001", 1, false),
			c("127.0.0.01", 1, false), c("foo.123", 1, false), c("123.foo", 1, true), c("1password.com", 1, true)}},
		{"127.0.0.1", []tc{c("127.0.0.1", 1, true), c("127.0.0.1.", 1, true), c("::ffff:127.0.0.1", 1, true),
			c("[::ffff:127.0.0.1]", 1, true), c("[::ffff:7f00:1]", 1, true), c("127.0.0.2", 1, false), c("localhost", 1, false),
			c("::1", 1, false)}},
		{"[::1]:8080", []tc{c("::1", 8080, true), c("[::1]", 8080, true), c("0:0:0:0:0:0:0:1", 8080, true),
			c("::1", 8081, false), c("127.0.0.1", 8080, false)}},
		{"[::ffff:127.0.0.1]", []tc{c("127.0.0.1", 1, true)}},
		{"10.0.0.0/8", []tc{c("10.1.2.3", 1, true), c("10.255.255.255", 1, true), c("11.0.0.1", 1, false),
			c("::ffff:10.0.0.1", 1, true), c("fd00::1", 1, false), c("ten.example", 1, false)}},
		{"10.1.2.3/8", []tc{c("10.9.9.9", 1, true)}}, // masked
		{"[fd00::/8]", []tc{c("fd12::1", 1, true), c("fe80::1", 1, false), c("10.0.0.1", 1, false)}},
		{"[::ffff:0:0/96]", []tc{c("1.2.3.4", 1, true), c("::1", 1, false)}},
		{"[::/0]", []tc{c("1.2.3.4", 1, true), c("2001:db8::1", 1, true), c("example.com", 1, false)}},
		{"192.168.*.*", []tc{c("192.168.1.20", 1, true), c("192.168.1", 1, false), c("192.169.1.1", 1, false),
			c("::ffff:192.168.0.1", 1, true), c("192.168.1.1.1", 1, false)}},
		{"*.*", []tc{c("a.b", 1, true), c("::1", 1, false)}},
	}
	for _, tt := range tests {
		ch := mustCompile(t, DenyAll().AllowNet(tt.pattern))
		for _, c := range tt.cases {
			if got := ch.CheckNet(c.op, c.host, c.port) == nil; got != c.want {
				t.Errorf("pattern %q: %s %q port %d: allowed=%v, want %v", tt.pattern, c.op, c.host, c.port, got, c.want)
			}
		}
	}
}

func TestNetOps(t *testing.T) {
	ch := mustCompile(t, &Policy{Net: []NetRule{
		{Effect: Allow, Ops: []NetOp{NetListen}, Hosts: []string{"127.0.0.1:8080"}},
		{Effect: Allow, Ops: []NetOp{NetDNS, NetConnect}, Hosts: []string{"*.example.com:443"}},
		{Effect: Allow, Ops: []NetOp{NetAll}, Hosts: []string{"all.test"}},
	}})
	tests := []struct {
		op   NetOp
		host string
		port int
		want bool
	}{
		{NetListen, "127.0.0.1", 8080, true},
		{NetConnect, "127.0.0.1", 8080, false},
		{NetConnect, "a.example.com", 443, true},
		{NetDNS, "a.example.com", 0, true},
		{NetListen, "a.example.com", 443, false},
		{NetListen, "all.test", 1, true},
		{NetDNS, "all.test", 1, true},
		{NetAll, "all.test", 1, false},
		{"", "all.test", 1, false},
	}
	for _, tt := range tests {
		if got := ch.CheckNet(tt.op, tt.host, tt.port) == nil; got != tt.want {
			t.Errorf("%s %s:%d allowed=%v, want %v", tt.op, tt.host, tt.port, got, tt.want)
		}
	}
}

func TestNetPatternErrors(t *testing.T) {
	for _, p := range []string{"", ":80", "::1", "::1:80", "[::1", "[::1]x", "[::1]:", "example.com:", "example.com:99999",
		"example.com:9-1", "example.com:-1", "example.com:+80", "example.com:1-", "example.com:a", "1.2.3.4/33",
		"[1.2.3.4]", "[::1]/8", "1.2.3.4:80:90", "exa mple.com", "127.1", "0x7f.0.0.1", "2130706433", "a..b", ".a",
		"example.*com.**x", "a**.b", "[fe80::1%eth0]", "[fe80::/10%eth0]", "fd00::/8", "ex\\*.com", "a/b.com",
		strings.Repeat("a", 254), "exämple.com"} {
		if _, err := compileNetPattern(p); err == nil {
			t.Errorf("compileNetPattern(%q) succeeded, want error", p)
		}
	}
	for _, p := range []string{"*", "**", "*:*", "a.b", "EXAMPLE.COM.", "1.2.3.4", "1.2.3.4:0", "[::]", "[::1]:1-2",
		"[2001:db8::/32]:443", "0.0.0.0/0", "*.*.example.com", "**.example.com:80"} {
		if _, err := compileNetPattern(p); err != nil {
			t.Errorf("compileNetPattern(%q): %v", p, err)
		}
	}
}

func TestCheckNetAddr(t *testing.T) {
	p := func(s string) netip.Prefix { return netip.MustParsePrefix(s) }
	a := netip.MustParseAddr
	none := netip.Prefix{}
	tests := []struct {
		name    string
		pol     *Policy
		addr    netip.Addr
		port    int
		scope   netip.Prefix
		viaName bool
		want    bool
	}{
		{"public allowed by star", DenyAll().AllowNet("*"), a("93.184.216.34"), 443, none, false, true},
		{"star does not open private", DenyAll().AllowNet("*"), a("10.0.0.1"), 80, p("10.0.0.0/8"), false, false},
		{"star does not open metadata", DenyAll().AllowNet("*:80"), a("169.254.169.254"), 80, p("169.254.0.0/16"), false, false},
		{"wide prefix does not open private", DenyAll().AllowNet("0.0.0.0/0"), a("10.0.0.1"), 80, p("10.0.0.0/8"), false, false},
		{"v6 any does not open ula", DenyAll().AllowNet("[::/0]"), a("fd00::1"), 80, p("fc00::/7"), false, false},
		{"glob does not open private", DenyAll().AllowNet("10.*.*.*"), a("10.0.0.1"), 80, p("10.0.0.0/8"), false, false},
		{"address opens loopback", DenyAll().AllowNet("127.0.0.1:8080"), a("127.0.0.1"), 8080, p("127.0.0.0/8"), false, true},
		{"address other port", DenyAll().AllowNet("127.0.0.1:8080"), a("127.0.0.1"), 8081, p("127.0.0.0/8"), false, false},
		{"narrow prefix opens private", DenyAll().AllowNet("10.1.0.0/16"), a("10.1.2.3"), 80, p("10.0.0.0/8"), false, true},
		{"exact range opens private", DenyAll().AllowNet("10.0.0.0/8"), a("10.1.2.3"), 80, p("10.0.0.0/8"), false, true},
		{"later deny wins", DenyAll().AllowNet("127.0.0.1").DenyNet("*"), a("127.0.0.1"), 1, p("127.0.0.0/8"), false, false},
		{"mixed rule explicit", DenyAll().AllowNet("*", "127.0.0.1"), a("127.0.0.1"), 1, p("127.0.0.0/8"), false, true},
		{"via name no rule", DenyAll().AllowNet("example.com"), a("93.184.216.34"), 443, none, true, true},
		{"via name star ignored", DenyAll().AllowNet("example.com").DenyNet("*"), a("93.184.216.34"), 443, none, true, true},
		{"via name address deny", DenyAll().AllowNet("example.com").DenyNet("93.184.0.0/16"), a("93.184.216.34"), 443, none, true, false},
		{"via name private", DenyAll().AllowNet("example.com"), a("10.0.0.1"), 443, p("10.0.0.0/8"), true, false},
		{"via name private explicit", DenyAll().AllowNet("example.com", "10.0.0.1"), a("10.0.0.1"), 443, p("10.0.0.0/8"), true, true},
		{"direct no rule", DenyAll().AllowNet("example.com"), a("93.184.216.34"), 443, none, false, false},
		{"invalid addr", DenyAll().AllowNet("*"), netip.Addr{}, 1, none, false, false},
		{"mapped folded", DenyAll().AllowNet("127.0.0.1"), a("::ffff:127.0.0.1"), 1, p("127.0.0.0/8"), false, true},
	}
	for _, tt := range tests {
		ch := mustCompile(t, tt.pol)
		err := ch.CheckNetAddr(NetConnect, tt.addr, tt.port, tt.scope, tt.viaName)
		if got := err == nil; got != tt.want {
			t.Errorf("%s: allowed=%v (%v), want %v", tt.name, got, err, tt.want)
		}
		if err != nil && !errors.Is(err, errno.EACCES) {
			t.Errorf("%s: %v does not match EACCES", tt.name, err)
		}
	}
	var nilChecker *Checker
	if nilChecker.CheckNetAddr(NetConnect, a("1.1.1.1"), 1, none, true) == nil {
		t.Error("nil checker allowed")
	}
}
