package netstack

import "net/netip"

// specialRanges are the address ranges a guest must never reach on the
// host network unless a rule names the address or a prefix inside the
// range (see policy.Checker.CheckNetAddr): the host itself, the networks
// it sits on, cloud metadata services, and addresses that embed an IPv4
// address an attacker could choose. A broad rule such as "*" or
// "0.0.0.0/0" is meant as "the internet" and does not open them.
//
// The order matters: the first range that contains an address is its
// scope, so narrower ranges come before the ranges that hold them.
var specialRanges = mustPrefixes(
	// IPv4.
	"0.0.0.0/8",       // "this network"; 0.0.0.0 reaches the host's own services
	"10.0.0.0/8",      // private
	"100.64.0.0/10",   // carrier-grade NAT
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local, cloud metadata (169.254.169.254)
	"172.16.0.0/12",   // private
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // documentation
	"192.88.99.0/24",  // 6to4 relay anycast
	"192.168.0.0/16",  // private
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation
	"203.0.113.0/24",  // documentation
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, and 255.255.255.255 broadcast
	// IPv6.
	"::1/128",         // loopback
	"::/128",          // unspecified
	"::/96",           // IPv4-compatible (deprecated), embeds IPv4
	"::ffff:0:0/96",   // IPv4-mapped: folded to IPv4 before checks; kept for safety
	"::ffff:0:0:0/96", // IPv4-translated (SIIT)
	"64:ff9b::/96",    // NAT64, embeds IPv4
	"64:ff9b:1::/48",  // local-use NAT64
	"100::/64",        // discard
	"2001::/32",       // Teredo, embeds IPv4
	"2001:10::/28",    // ORCHID
	"2001:20::/28",    // ORCHIDv2
	"2001:db8::/32",   // documentation
	"2002::/16",       // 6to4, embeds IPv4
	"fc00::/7",        // unique local
	"fe80::/10",       // link-local
	"fec0::/10",       // site-local (deprecated)
	"ff00::/8",        // multicast
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// SpecialScope returns the special range holding a (after folding an
// IPv4-mapped address to IPv4), or false for an ordinary public address.
// Zoned and invalid addresses are special with the whole family as scope,
// so no rule short of naming them opens them.
func SpecialScope(a netip.Addr) (netip.Prefix, bool) {
	if !a.IsValid() {
		return netip.PrefixFrom(netip.IPv4Unspecified(), 0), true
	}
	a = a.Unmap()
	if a.Zone() != "" {
		return netip.PrefixFrom(netip.IPv6Unspecified(), 0), true
	}
	for _, p := range specialRanges {
		if p.Contains(a) {
			return p, true
		}
	}
	return netip.Prefix{}, false
}

// isLocal reports whether a connection to a stays inside the VM: the
// loopback ranges, and the unspecified address, which Linux also routes to
// the local host (so "0.0.0.0:port" never reaches the host's loopback).
func isLocal(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsUnspecified()
}
