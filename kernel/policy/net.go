package policy

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// hostKind says how a network pattern's host part matches.
type hostKind uint8

const (
	hostAny    hostKind = iota // "*": any host name or address
	hostAddr                   // one IP address
	hostPrefix                 // a CIDR prefix
	hostGlob                   // a name glob over '.'-separated labels
)

// netPattern is a compiled "HOST[:PORT]".
type netPattern struct {
	kind           hostKind
	addr           netip.Addr
	prefix         netip.Prefix
	glob           segPattern
	portLo, portHi int
}

// netTarget is a canonical host from a check: an IP address (IPv4-mapped
// IPv6 folded to IPv4) and/or a lower-case name. name is the dotted text
// matched by globs; for an IPv6 address it is empty, so name globs never
// match IPv6.
type netTarget struct {
	addr netip.Addr
	isIP bool
	name string
}

// maxHostLen bounds host names (DNS allows 253 characters).
const maxHostLen = 253

// compileNetPattern parses "HOST[:PORT]". HOST is "*", a name glob, an IPv4
// address or CIDR prefix, or a bracketed IPv6 address or prefix. PORT is a
// number, a range "LO-HI", or "*"; without it every port matches.
func compileNetPattern(s string) (netPattern, error) {
	var p netPattern
	host, port, hasPort := s, "", false
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return p, fmt.Errorf("missing ']'")
		}
		host = s[1:end]
		switch rest := s[end+1:]; {
		case rest == "":
		case rest[0] == ':':
			port, hasPort = rest[1:], true
		default:
			return p, fmt.Errorf("unexpected %q after ']'", rest)
		}
		if err := p.compileIP(host, true); err != nil {
			return p, err
		}
	} else {
		switch strings.Count(s, ":") {
		case 0:
		case 1:
			i := strings.IndexByte(s, ':')
			host, port, hasPort = s[:i], s[i+1:], true
		default:
			return p, fmt.Errorf("IPv6 addresses must be in brackets, e.g. [::1]:80")
		}
		if err := p.compileHost(host); err != nil {
			return p, err
		}
	}
	p.portLo, p.portHi = 0, 65535
	if hasPort {
		lo, hi, err := parsePortSpec(port)
		if err != nil {
			return p, err
		}
		p.portLo, p.portHi = lo, hi
	}
	return p, nil
}

// compileIP parses an address or prefix; bracketed says it came from
// "[...]", which must hold IPv6.
func (p *netPattern) compileIP(s string, bracketed bool) error {
	if strings.IndexByte(s, '/') >= 0 {
		pfx, err := netip.ParsePrefix(s)
		if err != nil || pfx.Addr().Zone() != "" || pfx.Addr().Is6() != bracketed {
			return fmt.Errorf("invalid CIDR prefix %q", s)
		}
		pfx = pfx.Masked()
		// An IPv4-mapped prefix describes IPv4 addresses; checks fold
		// mapped targets to IPv4, so the prefix must be folded too.
		if a := pfx.Addr(); a.Is4In6() && pfx.Bits() >= 96 {
			pfx = netip.PrefixFrom(a.Unmap(), pfx.Bits()-96)
		}
		p.kind, p.prefix = hostPrefix, pfx
		return nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" || a.Is6() != bracketed {
		if bracketed {
			return fmt.Errorf("invalid IPv6 address %q", s)
		}
		return fmt.Errorf("invalid IPv4 address %q", s)
	}
	p.kind, p.addr = hostAddr, a.Unmap()
	return nil
}

// compileHost parses an unbracketed host: "*", an IPv4 address or prefix,
// or a name glob.
func (p *netPattern) compileHost(h string) error {
	if h == "" {
		return fmt.Errorf("empty host (use * for any host)")
	}
	if h == "*" || h == "**" {
		p.kind = hostAny
		return nil
	}
	if strings.IndexByte(h, '/') >= 0 || isNumericLabel(lastLabel(h)) && !hasGlobMeta(h) {
		return p.compileIP(h, false)
	}
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if len(h) > maxHostLen {
		return fmt.Errorf("host longer than %d characters", maxHostLen)
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !isHostByte(c) && c != '*' && c != '?' {
			return fmt.Errorf("invalid character %q in host", c)
		}
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" {
			return fmt.Errorf("empty label in host %q", h)
		}
	}
	g, err := compileSegments(labels, '.')
	if err != nil {
		return fmt.Errorf("host %q: %w", h, err)
	}
	p.kind, p.glob = hostGlob, g
	return nil
}

func isHostByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

func lastLabel(h string) string {
	h = strings.TrimSuffix(h, ".")
	return h[strings.LastIndexByte(h, '.')+1:]
}

// isNumericLabel reports whether a label looks like a number. A host whose
// last label is numeric is an IPv4 address to URL parsers and to
// inet_aton ("127.1", "0x7f.1", "2130706433"), so a name that looks like
// one but is not canonical dotted-decimal must never be matched as a name.
func isNumericLabel(l string) bool {
	if l == "" {
		return false
	}
	if len(l) > 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X') {
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

// parsePortSpec parses "N", "LO-HI" or "*".
func parsePortSpec(s string) (lo, hi int, err error) {
	if s == "*" {
		return 0, 65535, nil
	}
	a, b, isRange := strings.Cut(s, "-")
	if lo, err = parsePort(a); err != nil {
		return 0, 0, err
	}
	if !isRange {
		return lo, lo, nil
	}
	if hi, err = parsePort(b); err != nil {
		return 0, 0, err
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("port range %q is backwards", s)
	}
	return lo, hi, nil
}

func parsePort(s string) (int, error) {
	if s == "" || len(s) > 5 {
		return 0, fmt.Errorf("invalid port %q", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("invalid port %q", s)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > 65535 {
		return 0, fmt.Errorf("invalid port %q", s)
	}
	return n, nil
}

// canonHost turns a host from a check into a netTarget, or reports false
// for anything that is not a well-formed IP address or DNS name: such a
// host never matches, so it is denied.
func canonHost(h string) (netTarget, bool) {
	if h == "" || len(h) > maxHostLen+2 {
		return netTarget{}, false
	}
	if h[0] == '[' {
		if h[len(h)-1] != ']' {
			return netTarget{}, false
		}
		a, err := netip.ParseAddr(h[1 : len(h)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return netTarget{}, false
		}
		return ipTarget(a), true
	}
	// A fully qualified "example.com." names the same host as
	// "example.com"; fold it so a deny rule cannot be side-stepped.
	if h[len(h)-1] == '.' {
		h = h[:len(h)-1]
	}
	if strings.IndexByte(h, ':') >= 0 || h != "" && h[0] >= '0' && h[0] <= '9' {
		if a, err := netip.ParseAddr(h); err == nil {
			if a.Zone() != "" {
				return netTarget{}, false // zones name host interfaces
			}
			if a.Is4() {
				// netip accepts only canonical dotted-decimal IPv4, so
				// the input is already the canonical text.
				return netTarget{addr: a, isIP: true, name: h}, true
			}
			return ipTarget(a), true
		}
	}
	if h == "" || len(h) > maxHostLen {
		return netTarget{}, false
	}
	upper := false
	labelStart := 0
	for i := 0; i <= len(h); i++ {
		if i == len(h) || h[i] == '.' {
			if n := i - labelStart; n == 0 || n > 63 {
				return netTarget{}, false
			}
			labelStart = i + 1
			continue
		}
		c := h[i]
		if 'A' <= c && c <= 'Z' {
			upper = true
		} else if !isHostByte(c) {
			return netTarget{}, false
		}
	}
	if isNumericLabel(lastLabel(h)) {
		return netTarget{}, false
	}
	if upper {
		h = strings.ToLower(h) // allocates, but only for mixed-case names
	}
	return netTarget{name: h}, true
}

func ipTarget(a netip.Addr) netTarget {
	if a.Is4In6() {
		a = a.Unmap()
		return netTarget{addr: a, isIP: true, name: a.String()}
	}
	return netTarget{addr: a, isIP: true}
}

// matchHost reports whether the pattern's host part matches t.
func (p *netPattern) matchHost(t *netTarget) bool {
	switch p.kind {
	case hostAny:
		return true
	case hostAddr:
		return t.isIP && t.addr == p.addr
	case hostPrefix:
		if !t.isIP {
			return false
		}
		a := t.addr
		if a.Is4() && p.prefix.Addr().Is6() {
			// An IPv6 prefix such as ::/0 or ::ffff:0:0/95 may cover the
			// mapped form of an IPv4 address.
			a = netip.AddrFrom16(a.As16())
		}
		return p.prefix.Contains(a)
	case hostGlob:
		return t.name != "" && p.glob.match(t.name)
	}
	return false
}

// explicitIn reports whether the pattern names an address inside scope by
// itself: an address pattern, or a prefix no wider than scope. (The
// pattern is known to match an address in scope, so a prefix at least as
// long as scope lies inside it.) Any pattern is explicit when scope is
// invalid, which stands for "no special range".
func (p *netPattern) explicitIn(scope netip.Prefix) bool {
	if !scope.IsValid() {
		return true
	}
	switch p.kind {
	case hostAddr:
		return true
	case hostPrefix:
		return p.prefix.Addr().Is4() == scope.Addr().Is4() && p.prefix.Bits() >= scope.Bits()
	}
	return false
}
