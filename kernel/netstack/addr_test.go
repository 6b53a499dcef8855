package netstack

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
)

func TestParseHost(t *testing.T) {
	tests := []struct {
		in     string
		want   string // canonical address; "" for a name
		errant bool
	}{
		{"127.0.0.1", "127.0.0.1", false},
		{"2130706433", "127.0.0.1", false},
		{"0x7f000001", "127.0.0.1", false},
		{"0X7F000001", "127.0.0.1", false},
		{"017700000001", "127.0.0.1", false},
		{"127.1", "127.0.0.1", false},
		{"127.0.1", "127.0.0.1", false},
		{"0x7f.1", "127.0.0.1", false},
		{"0177.0.0.01", "127.0.0.1", false},
		{"0x7f.0x0.0x0.0x1", "127.0.0.1", false},
		{"127.0.0.1.", "127.0.0.1", false},
		{"0", "0.0.0.0", false},
		{"0x", "0.0.0.0", false},
		{"3232235521", "192.168.0.1", false},
		{"0xa9fea9fe", "169.254.169.254", false},
		{"169.254.43518", "169.254.169.254", false},
		{"012.0.0.1", "10.0.0.1", false},
		{"::1", "::1", false},
		{"[::1]", "::1", false},
		{"::ffff:127.0.0.1", "127.0.0.1", false},
		{"[::ffff:7f00:1]", "127.0.0.1", false},
		{"0:0:0:0:0:0:0:1", "::1", false},
		{"example.com", "", false},
		{"localhost", "", false},
		{"123.example", "", false},
		{"1password.com", "", false},
		{"256.0.0.1", "", true},
		{"1.2.3.4.5", "", true},
		{"4294967296", "", true},
		{"0x1g", "", true},
		{"08", "", true}, // bad octal
		{"1.256.1", "", true},
		{"foo.0x", "", true},
		{"fe80::1%eth0", "", true},
		{"[fe80::1%25eth0]", "", true},
		{"[1.2.3.4]", "", true},
		{"[::1", "", true},
		{"", "", true},
		{"a\x00b", "", true},
	}
	for _, tt := range tests {
		a, isIP, err := ParseHost(tt.in)
		if tt.errant {
			if err == nil || !errors.Is(err, errno.EINVAL) {
				t.Errorf("ParseHost(%q) = %v, %v, %v; want EINVAL", tt.in, a, isIP, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseHost(%q): %v", tt.in, err)
			continue
		}
		if tt.want == "" {
			if isIP {
				t.Errorf("ParseHost(%q) = %v, want a name", tt.in, a)
			}
			continue
		}
		if !isIP || a != netip.MustParseAddr(tt.want) {
			t.Errorf("ParseHost(%q) = %v (ip %v), want %s", tt.in, a, isIP, tt.want)
		}
	}
}

func TestParseAddr(t *testing.T) {
	tests := []struct {
		in   string
		want Addr
		err  bool
	}{
		{"127.0.0.1:80", InetAddr(netip.MustParseAddrPort("127.0.0.1:80")), false},
		{"2130706433:80", InetAddr(netip.MustParseAddrPort("127.0.0.1:80")), false},
		{"[::1]:443", InetAddr(netip.MustParseAddrPort("[::1]:443")), false},
		{"example.com:443", HostAddr("example.com", 443), false},
		{"example.com:443\x00\x00junk", HostAddr("example.com", 443), false},
		{"unix:/tmp/s.sock", UnixAddr("/tmp/s.sock"), false},
		{"unix-abstract:6162", Addr{Family: AFUnix, Path: "ab", Abstract: true}, false},
		{"unix-path-hex:2f746d702f78", UnixAddr("/tmp/x"), false},
		{"::1:80", Addr{}, true},
		{"example.com", Addr{}, true},
		{"example.com:", Addr{}, true},
		{"example.com:65536", Addr{}, true},
		{"example.com:-1", Addr{}, true},
		{"example.com:+1", Addr{}, true},
		{":80", Addr{}, true},
		{"exa mple.com:80", Addr{}, true},
		{"256.1.1.1:80", Addr{}, true},
		{"unix:", Addr{}, true},
		{"unix-abstract:zz", Addr{}, true},
		{"unix-path-hex:2f00", Addr{}, true},
	}
	for _, tt := range tests {
		got, err := ParseAddr(tt.in)
		if tt.err {
			if !errors.Is(err, errno.EINVAL) {
				t.Errorf("ParseAddr(%q) = %+v, %v; want EINVAL", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseAddr(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestSpecialScope(t *testing.T) {
	special := []string{"0.0.0.0", "0.1.2.3", "10.0.0.1", "100.64.0.1", "127.0.0.1", "127.255.255.254",
		"169.254.169.254", "172.16.0.1", "172.31.255.255", "192.0.0.170", "192.0.2.1", "192.168.1.1",
		"198.18.0.1", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		"::", "::1", "::127.0.0.1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a00:1",
		"64:ff9b:1::1", "2001::1", "2001:db8::1", "2002:a00:1::1", "2002:7f00:1::", "fc00::1", "fd12:3456::1",
		"fe80::1", "fec0::1", "ff02::1", "100::1"}
	for _, s := range special {
		if _, ok := SpecialScope(netip.MustParseAddr(s)); !ok {
			t.Errorf("%s is not special", s)
		}
	}
	public := []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "172.32.0.1", "100.128.0.1", "2606:4700::1111",
		"::ffff:8.8.8.8", "11.0.0.1", "169.255.0.1"}
	for _, s := range public {
		if p, ok := SpecialScope(netip.MustParseAddr(s)); ok {
			t.Errorf("%s is special (%v)", s, p)
		}
	}
	if p, _ := SpecialScope(netip.MustParseAddr("::1")); p.Bits() != 128 {
		t.Errorf("scope of ::1 = %v, want ::1/128", p)
	}
	if _, ok := SpecialScope(netip.Addr{}); !ok {
		t.Error("the invalid address is not special")
	}
}

// FuzzParseAddr checks that address parsing never panics, that what it
// accepts is well-formed, and that internet addresses print back to text
// that parses to the same address.
func FuzzParseAddr(f *testing.F) {
	for _, s := range []string{"127.0.0.1:80", "[::1]:1", "example.com:443", "unix:/a", "unix-abstract:00ff",
		"unix-path-hex:2f61", "0x7f.1:1", "2130706433:0", "[::ffff:1.2.3.4]:5", "a:65535", "[fe80::1%eth0]:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddr(s)
		if err != nil {
			if !errors.Is(err, errno.EINVAL) {
				t.Fatalf("ParseAddr(%q): %v is not EINVAL", s, err)
			}
			return
		}
		switch {
		case a.Family == AFUnix:
			if a.Path == "" || len(a.Path) > MaxUnixPath {
				t.Fatalf("ParseAddr(%q): bad unix path %q", s, a.Path)
			}
		case a.Name != "":
			if !validName(a.Name) {
				t.Fatalf("ParseAddr(%q): invalid name %q", s, a.Name)
			}
			if _, isIP, err := ParseHost(a.Name); isIP || err != nil {
				t.Fatalf("ParseAddr(%q): name %q is an IP spelling", s, a.Name)
			}
		default:
			ip := a.IP.Addr()
			if !ip.IsValid() || ip.Zone() != "" || ip.Is4In6() {
				t.Fatalf("ParseAddr(%q): bad address %v", s, ip)
			}
			b, err := ParseAddr(a.String())
			if err != nil || b != a {
				t.Fatalf("ParseAddr(%q) = %+v; reparse of %q = %+v, %v", s, a, a.String(), b, err)
			}
		}
		_, _, _ = ParseHost(s)
	})
}
