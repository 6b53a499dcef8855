package netstack

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/secexec/secexec/kernel/errno"
)

// Family is a socket address family, numbered as on Linux.
type Family int

// Address families.
const (
	AFUnix  Family = 1
	AFInet  Family = 2
	AFInet6 Family = 10
)

// Type is a socket type, numbered as on Linux.
type Type int

// Socket types.
const (
	SockStream Type = 1
	SockDgram  Type = 2
)

// Protocol numbers accepted by NewSocket besides 0 (the default).
const (
	ProtoTCP = 6
	ProtoUDP = 17
)

// MaxUnixPath is the longest Unix socket path or abstract name, as the
// 108-byte sun_path of Linux allows (one byte for the NUL).
const MaxUnixPath = 107

// Addr is a socket address. Exactly one form is used:
//
//   - an IP address and port (AFInet, AFInet6): IP;
//   - a host name and port to resolve (Connect and SendTo only): Name and
//     IP.Port() (IP's address is left invalid); with IP's address set
//     too, that one of the name's addresses (what a guest that resolved
//     the name itself picked): the stack checks the name, resolves it
//     again and treats the address as reached through the name only if
//     the name still resolves to it, as a plain address otherwise;
//   - a Unix socket (AFUnix): Path, an absolute guest path or, with
//     Abstract, a name in the abstract namespace.
type Addr struct {
	Family   Family
	IP       netip.AddrPort
	Name     string
	Path     string
	Abstract bool
}

// InetAddr returns the address of ap, with the family of its address.
func InetAddr(ap netip.AddrPort) Addr {
	f := AFInet6
	if ap.Addr().Is4() {
		f = AFInet
	}
	return Addr{Family: f, IP: ap}
}

// HostAddr returns the address of a host name (or an IP spelling, which
// the stack parses) and port.
func HostAddr(host string, port uint16) Addr {
	return Addr{Family: AFInet, Name: host, IP: netip.AddrPortFrom(netip.Addr{}, port)}
}

// UnixAddr returns the address of a Unix socket by path.
func UnixAddr(path string) Addr { return Addr{Family: AFUnix, Path: path} }

// Port returns the port of an internet address (0 for Unix addresses).
func (a Addr) Port() uint16 { return a.IP.Port() }

// String formats the address as the host ABI spells it: "1.2.3.4:80",
// "[::1]:80", "name:80", "unix:/path" or "unix-abstract:HEX".
func (a Addr) String() string {
	switch {
	case a.Family == AFUnix && a.Abstract:
		return "unix-abstract:" + hex.EncodeToString([]byte(a.Path))
	case a.Family == AFUnix:
		return "unix:" + a.Path
	case a.Name != "":
		return a.Name + ":" + strconv.Itoa(int(a.IP.Port()))
	}
	return a.IP.String()
}

// ParseHost parses the host part of an address the way resolvers do
// before asking DNS. It returns isIP false for a DNS name. IP spellings are
// canonicalised: dotted decimal and IPv6 text, and the inet_aton forms
// that URL parsers and C libraries accept — decimal, octal and hex parts,
// one to four of them ("2130706433", "0x7f000001", "017700000001",
// "127.1", "0x7f.0.0.1") — all become the address they denote, so no
// spelling of an address can pass for a name or escape the checks made on
// the address. A host whose last label looks numeric but is not a valid
// address ("256.1.1.1", "1.2.3.4.5") fails with EINVAL, as do IPv6 zones
// (they name host interfaces) and brackets around IPv4.
func ParseHost(s string) (addr netip.Addr, isIP bool, err error) {
	if s == "" || len(s) > 255 || strings.IndexByte(s, 0) >= 0 {
		return netip.Addr{}, false, errno.EINVAL
	}
	if s[0] == '[' {
		if s[len(s)-1] != ']' {
			return netip.Addr{}, false, errno.EINVAL
		}
		a, err := netip.ParseAddr(s[1 : len(s)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return netip.Addr{}, false, errno.EINVAL
		}
		return a.Unmap(), true, nil
	}
	if strings.IndexByte(s, ':') >= 0 {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Addr{}, false, errno.EINVAL
		}
		return a.Unmap(), true, nil
	}
	h := strings.TrimSuffix(s, ".")
	last := h[strings.LastIndexByte(h, '.')+1:]
	if !numericLabel(last) {
		return netip.Addr{}, false, nil
	}
	a, ok := parseInetAton(h)
	if !ok {
		return netip.Addr{}, false, errno.EINVAL
	}
	return a, true, nil
}

// numericLabel reports whether a label reads as a number to inet_aton:
// decimal digits, or "0x" followed by anything (invalid hex is then an
// error rather than a name).
func numericLabel(l string) bool {
	if l == "" {
		return false
	}
	if len(l) >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X') {
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

// parseInetAton parses the IPv4 forms of inet_aton(3): a.b.c.d, a.b.c
// (c fills 16 bits), a.b (b fills 24 bits) and a (32 bits); each part is
// decimal, octal with a leading 0, or hex with 0x.
func parseInetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, ok := parseAtonPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	last := len(vals) - 1
	for i := 0; i < last; i++ {
		if vals[i] > 0xff {
			return netip.Addr{}, false
		}
		n |= vals[i] << (24 - 8*i)
	}
	if vals[last] >= 1<<(32-8*last) {
		return netip.Addr{}, false
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

func parseAtonPart(p string) (uint64, bool) {
	base := 10
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true // inet_aton reads "0x" as 0
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if p == "" || len(p) > 12 {
		return 0, false
	}
	v, err := strconv.ParseUint(p, base, 64)
	if err != nil || v > 0xffffffff {
		return 0, false
	}
	return v, true
}

// ParseAddr parses the text address of the agentOS host ABI's
// net_connect: "host:port", "[ipv6]:port", "unix:PATH",
// "unix-abstract:HEX" or "unix-path-hex:HEX". Anything after a NUL is cut
// off, as the ABI pads with NULs. A host that is an IP spelling becomes an
// internet address (see ParseHost); any other host is returned in Name for
// the stack to resolve. Errors match EINVAL.
func ParseAddr(s string) (Addr, error) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	switch {
	case strings.HasPrefix(s, "unix:"):
		return unixAddr(s[len("unix:"):], false)
	case strings.HasPrefix(s, "unix-abstract:"):
		b, err := hex.DecodeString(s[len("unix-abstract:"):])
		if err != nil {
			return Addr{}, fmt.Errorf("address %q: %w", s, errno.EINVAL)
		}
		return unixAddr(string(b), true)
	case strings.HasPrefix(s, "unix-path-hex:"):
		b, err := hex.DecodeString(s[len("unix-path-hex:"):])
		if err != nil || strings.IndexByte(string(b), 0) >= 0 {
			return Addr{}, fmt.Errorf("address %q: %w", s, errno.EINVAL)
		}
		return unixAddr(string(b), false)
	}
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return Addr{}, fmt.Errorf("address %q: %w", s, errno.EINVAL)
	}
	host, portText := s[:i], s[i+1:]
	port, err := parsePort(portText)
	if err != nil {
		return Addr{}, fmt.Errorf("address %q: %w", s, err)
	}
	if strings.IndexByte(host, ':') >= 0 && host[0] != '[' {
		return Addr{}, fmt.Errorf("address %q: IPv6 needs brackets: %w", s, errno.EINVAL)
	}
	ip, isIP, err := ParseHost(host)
	if err != nil {
		return Addr{}, fmt.Errorf("address %q: %w", s, err)
	}
	if isIP {
		return InetAddr(netip.AddrPortFrom(ip, port)), nil
	}
	if !validName(host) {
		return Addr{}, fmt.Errorf("address %q: %w", s, errno.EINVAL)
	}
	return HostAddr(host, port), nil
}

func unixAddr(p string, abstract bool) (Addr, error) {
	if p == "" || len(p) > MaxUnixPath {
		return Addr{}, fmt.Errorf("unix address: %w", errno.EINVAL)
	}
	return Addr{Family: AFUnix, Path: p, Abstract: abstract}, nil
}

func parsePort(s string) (uint16, error) {
	if s == "" || len(s) > 5 {
		return 0, errno.EINVAL
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errno.EINVAL
		}
	}
	n, _ := strconv.Atoi(s)
	if n > 65535 {
		return 0, errno.EINVAL
	}
	return uint16(n), nil
}

// validName reports whether s is a syntactically valid DNS name: labels
// of 1-63 letters, digits, '-' and '_', at most 253 characters, with an
// optional trailing dot.
func validName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
