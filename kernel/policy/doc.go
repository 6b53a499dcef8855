// Package policy is the permission engine of the secexec kernel: it decides
// whether a guest may touch a path, a network endpoint, a command, an
// environment variable or a host tool.
//
// # Model
//
// Everything is denied unless a rule allows it. A [Policy] is plain data
// (JSON-serialisable, see [Parse]) made of five domains, each an ordered
// list of rules. A rule has an effect ("allow" or "deny") and one or more
// patterns; in the fs and net domains it may also name operations (none,
// or "*", means all). For a check, the rules of its domain are considered
// in order and the LAST rule that matches decides; if none matches, or the
// domain is missing, the answer is deny. So a broad allow followed by a
// narrow deny carves out an exception, and vice versa:
//
//	{"fs": [
//	  {"effect": "allow", "paths": ["/workspace/**"]},
//	  {"effect": "deny",  "ops": ["write"], "paths": ["/workspace/.git/**"]}
//	]}
//
// [Compile] turns a Policy into a [Checker]: immutable, safe for concurrent
// use, allocation-free on allowed checks. A denial is a *[DeniedError]
// that matches errno.EACCES, reading like "permission denied: fs write
// /etc/passwd". [Checker.WithAudit] attaches a subscriber that sees every
// denial (and, optionally, every allow) as an [Event].
//
// # Paths (fs domain, and exec path patterns)
//
// Patterns and checked paths are absolute guest paths, compared byte for
// byte (case-sensitive, no Unicode normalisation) one segment at a time:
//
//   - "*" matches any run of characters inside one segment, never '/'.
//     It matches names starting with '.' too. "/a/*" matches "/a/b" but
//     not "/a" and not "/a/b/c".
//   - "?" matches exactly one character (one UTF-8 rune) other than '/'.
//   - "**" as a whole segment matches zero or more segments: "/a/**"
//     matches "/a" itself and everything beneath it; "/a/**/b" matches
//     "/a/b" and "/a/x/y/b"; "/**" matches every path including "/".
//     "**" inside a segment ("/a/b**") is an error, not a silent "*".
//   - `\*`, `\?` and `\\` match a literal '*', '?' and '\'; any other
//     backslash is an error. Every other character is literal, including
//     '[', ']', '{' and '.', so "/src/[id].tsx" means exactly that file.
//   - Repeated slashes collapse. A pattern ending in '/' means the
//     directory and everything beneath it: "/etc/" is "/etc/**", so a deny
//     rule written that way cannot leave /etc/passwd uncovered.
//   - "." and ".." segments, relative patterns and NUL bytes are errors.
//
// The kernel resolves symlinks before calling [Checker.CheckFS], so rules
// apply to the file actually reached. CheckFS still denies any path that is
// relative, holds NUL, or has a "." or ".." segment, whatever the rules say,
// and ignores repeated and trailing slashes. Operations that name two paths
// (rename, link, symlink) are checked by the caller on each path the
// operation creates or removes. Because rules name paths while a hard link
// or a rename gives an object new names, the kernel also asks
// [Checker.CheckFSRelocate], which allows a link or rename only when the
// policy decides the same at the new name as at the old one (for a
// directory: on every path beneath it), so no deny rule can be walked
// around through another name.
//
// # Network (net domain)
//
// A pattern is "HOST[:PORT]"; without a port every port matches.
//
//   - HOST is "*" (any host or address); a DNS name glob whose labels are
//     matched like path segments with '.' as the separator, case-
//     insensitively ("*.example.com" matches "a.example.com" but neither
//     "example.com" nor "a.b.example.com"; "**.example.com" matches all
//     three); an IPv4 address or CIDR prefix ("127.0.0.1", "10.0.0.0/8");
//     or an IPv6 address or prefix in brackets ("[::1]", "[fd00::/8]").
//     Name globs also match the dotted text of IPv4 addresses
//     ("192.168.*.*") but never IPv6 addresses.
//   - PORT is a number, a range "8000-8999", or "*".
//
// Checked hosts are canonicalised: lower-cased, a trailing dot dropped,
// IPv4-mapped IPv6 addresses folded to IPv4 (so a rule on 127.0.0.1 also
// covers ::ffff:127.0.0.1). Malformed names, zoned addresses and names that
// resolvers would read as numeric IPv4 ("127.1", "0x7f.1", "2130706433")
// are denied. Ops are connect, listen and dns; for dns the port is ignored.
// The network layer should check a name before resolving it and each
// resolved address before connecting, so address rules survive DNS.
//
// # Commands (exec domain)
//
// A pattern without '/' is a name glob ("*" any run of characters) matched
// against the command's name: a bare command ("git") or the last segment of
// an absolute path ("/usr/bin/git"). A pattern starting with '/' is a path
// pattern (see Paths) matched only against absolute paths. A name rule
// trusts whatever binary carries the name; when the guest can write into
// directories that hold commands, use path patterns.
//
// # Environment (env) and host tools (tools)
//
// Patterns are globs over the whole key or name: "*" matches any run of
// characters, "?" one character; "AWS_*" matches every key starting with
// AWS_. Matching is case-sensitive.
//
// # Limits
//
// A JSON policy is at most [MaxPolicyBytes]; a domain has at most
// [MaxRules] rules, a rule at most [MaxPatternsPerRule] patterns, a
// pattern at most [MaxPatternLen] bytes and at most 63 segments after its
// leading literal segments. Matching never backtracks exponentially: a
// path check costs at most O(len(pattern) x len(path)) per pattern, and
// paths longer than [MaxPathLen] are denied.
package policy
