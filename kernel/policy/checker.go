package policy

import (
	"context"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/secexec/secexec/kernel/errno"
)

// Limits on what a check accepts. Longer targets are denied, which bounds
// the work a guest can cause per check.
const (
	// MaxPathLen is Linux's PATH_MAX; longer paths are denied.
	MaxPathLen = 4096
	// MaxTargetLen bounds commands, env keys and tool names.
	MaxTargetLen = 4096
)

// Domain names the kind of resource a rule or a check is about.
type Domain string

// The permission domains.
const (
	DomainFS   Domain = "fs"
	DomainNet  Domain = "net"
	DomainExec Domain = "exec"
	DomainEnv  Domain = "env"
	DomainTool Domain = "tool"
)

// The Op reported for the single-operation domains.
const (
	opExec = "exec"
	opEnv  = "read"
	opTool = "call"
)

// DeniedError is the error of a refused check. It matches errno.EACCES
// (and so fs.ErrPermission) with errors.Is. Target is what the guest asked
// for, as given, so the message never contains a host path.
type DeniedError struct {
	Domain Domain
	Op     string // e.g. "write", "connect"; "exec", "read" (env), "call" (tool)
	Target string // guest path, "host:port", command, env key or tool name
	Rule   int    // index of the deny rule in its domain, or -1: nothing matched
	// To is the new name of a link or rename that CheckFSRelocate
	// refused because the policy decides differently there; else "".
	To string
}

// Error reads like "permission denied: fs write /etc/passwd".
func (e *DeniedError) Error() string {
	var b strings.Builder
	b.WriteString("permission denied: ")
	b.WriteString(string(e.Domain))
	if e.Op != "" && e.Op != string(e.Domain) {
		b.WriteByte(' ')
		b.WriteString(e.Op)
	}
	b.WriteByte(' ')
	b.WriteString(printable(e.Target))
	if e.To != "" {
		b.WriteString(" -> ")
		b.WriteString(printable(e.To))
		b.WriteString(": the policy decides differently at the new name")
	}
	return b.String()
}

// Unwrap returns errno.EACCES.
func (e *DeniedError) Unwrap() error { return errno.EACCES }

// printable quotes a guest-chosen target if it holds bytes that would garble
// a log line or terminal (control characters, invalid UTF-8, spaces).
func printable(s string) string {
	if s == "" || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || (r >= 0x80 && !strconv.IsPrint(r)) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Event is one audited decision.
type Event struct {
	Time    time.Time
	Domain  Domain
	Op      string
	Target  string // as given by the caller; "host:port" for connect and listen
	To      string // the new name, for CheckFSRelocate; else ""
	Allowed bool
	Rule    int // index of the deciding rule in its domain, or -1 if none matched
}

// AuditMode selects which decisions reach the audit subscriber.
type AuditMode uint8

// Audit modes.
const (
	AuditDenials AuditMode = iota // only denials
	AuditAll                      // denials and allows
)

// pathRule, netRule, execRule and flatRule are compiled rules, stored per
// operation in reverse order so the first match found is the last one in
// the policy.
type pathRule struct {
	idx   int
	allow bool
	pats  []segPattern
}

type netRule struct {
	idx   int
	allow bool
	pats  []netPattern
}

type execPattern struct {
	isPath bool
	path   segPattern // when isPath
	name   segment    // otherwise
}

type execRule struct {
	idx   int
	allow bool
	pats  []execPattern
}

type flatRule struct {
	idx   int
	allow bool
	pats  []segment
}

// Checker answers permission checks for one compiled Policy. It is
// immutable and safe for concurrent use; a nil *Checker denies everything.
// Checks that are allowed do not allocate unless an audit subscriber
// wants allows.
type Checker struct {
	fs   [numFSOps][]pathRule
	net  [numNetOps][]netRule
	exec []execRule
	env  []flatRule
	tool []flatRule

	audit       func(Event)
	auditAllows bool
}

// WithAudit returns a copy of c that reports decisions to fn, which is
// called synchronously on the checking goroutine, possibly from many
// goroutines at once, so it must be quick and safe for concurrent use. A
// nil fn turns auditing off. c itself is unchanged.
func (c *Checker) WithAudit(fn func(Event), mode AuditMode) *Checker {
	var cp Checker
	if c != nil {
		cp = *c
	}
	cp.audit = fn
	cp.auditAllows = mode == AuditAll
	return &cp
}

// LogAudit returns an audit subscriber that logs each event to l: denials
// at Warn, allows at Debug.
func LogAudit(l *slog.Logger) func(Event) {
	return func(e Event) {
		level := slog.LevelDebug
		if !e.Allowed {
			level = slog.LevelWarn
		}
		l.LogAttrs(context.Background(), level, "policy decision",
			slog.String("domain", string(e.Domain)), slog.String("op", e.Op),
			slog.String("target", e.Target), slog.Bool("allowed", e.Allowed),
			slog.Int("rule", e.Rule))
	}
}

// decide finishes a check: it audits if asked and builds the error. Kept
// separate so the hot path's only audit cost is one nil test.
func (c *Checker) decide(d Domain, op, target string, allow bool, rule int) error {
	if c != nil && c.audit != nil && (!allow || c.auditAllows) {
		c.audit(Event{Time: time.Now(), Domain: d, Op: op, Target: target, Allowed: allow, Rule: rule})
	}
	if allow {
		return nil
	}
	return &DeniedError{Domain: d, Op: op, Target: target, Rule: rule}
}

// CheckFS reports whether op is allowed on path, an absolute guest path
// with symlinks already resolved. Repeated and trailing slashes are
// ignored; a path that is relative, holds a NUL byte or a "." or ".."
// segment, or is longer than MaxPathLen is denied whatever the rules say.
func (c *Checker) CheckFS(op FSOp, path string) error {
	i, okOp := fsOpIndex(op)
	p, okPath := canonPath(path)
	if c == nil || !okOp || !okPath {
		return c.decide(DomainFS, string(op), path, false, -1)
	}
	for _, r := range c.fs[i] {
		for k := range r.pats {
			if r.pats[k].match(p) {
				return c.decide(DomainFS, string(op), path, r.allow, r.idx)
			}
		}
	}
	return c.decide(DomainFS, string(op), path, false, -1)
}

// canonPath validates an absolute path and returns its segments joined by
// '/' without the leading slash ("" for the root). It allocates only for
// a path with repeated or trailing slashes.
func canonPath(p string) (string, bool) {
	if p == "" || p[0] != '/' || len(p) > MaxPathLen {
		return "", false
	}
	dirty := false
	start := 1
	for i := 1; i <= len(p); i++ {
		if i < len(p) {
			if c := p[i]; c == 0 {
				return "", false
			} else if c != '/' {
				continue
			}
		}
		switch p[start:i] {
		case "":
			dirty = dirty || len(p) > 1
		case ".", "..":
			return "", false
		}
		start = i + 1
	}
	if !dirty {
		return p[1:], true
	}
	b := make([]byte, 0, len(p))
	for _, seg := range strings.Split(p, "/") {
		if seg == "" {
			continue
		}
		if len(b) > 0 {
			b = append(b, '/')
		}
		b = append(b, seg...)
	}
	return string(b), true
}

// CheckNet reports whether op is allowed on host and port. host is an IP
// address (IPv6 with or without brackets) or a DNS name; the port is
// ignored for NetDNS. Malformed hosts, zoned IPv6 addresses, numeric names
// that are not dotted-decimal IPv4 ("127.1", "0x7f000001") and ports
// outside 0-65535 are denied. A network layer should check the name before
// resolving it and each resolved address before connecting, so that a
// rule on an address cannot be bypassed through DNS.
func (c *Checker) CheckNet(op NetOp, host string, port int) error {
	i, okOp := netOpIndex(op)
	t, okHost := canonHost(host)
	okPort := op == NetDNS || port >= 0 && port <= 65535
	if c == nil || !okOp || !okHost || !okPort {
		return c.decideNet(op, host, port, false, -1)
	}
	for _, r := range c.net[i] {
		for k := range r.pats {
			p := &r.pats[k]
			if (op == NetDNS || p.portLo <= port && port <= p.portHi) && p.matchHost(&t) {
				return c.decideNet(op, host, port, r.allow, r.idx)
			}
		}
	}
	return c.decideNet(op, host, port, false, -1)
}

// decideNet formats the target only when it is needed: for an error or an
// audit event.
func (c *Checker) decideNet(op NetOp, host string, port int, allow bool, rule int) error {
	if allow && (c == nil || c.audit == nil || !c.auditAllows) {
		return nil
	}
	target := host
	if op != NetDNS {
		h := host
		if strings.IndexByte(h, ':') >= 0 && !strings.HasPrefix(h, "[") {
			h = "[" + h + "]"
		}
		target = h + ":" + strconv.Itoa(port)
	}
	return c.decide(DomainNet, string(op), target, allow, rule)
}

// CheckExec reports whether a child process may run cmd: a bare command
// name ("ls") or an absolute path ("/bin/ls"). Name patterns match a bare
// name or the last segment of a path; path patterns match only absolute
// paths. A relative path with a slash, ".", "..", or anything with a NUL
// byte is denied.
func (c *Checker) CheckExec(cmd string) error {
	name, path, isPath, ok := canonCommand(cmd)
	if c == nil || !ok {
		return c.decide(DomainExec, opExec, cmd, false, -1)
	}
	for _, r := range c.exec {
		for k := range r.pats {
			p := &r.pats[k]
			var m bool
			if p.isPath {
				m = isPath && p.path.match(path)
			} else {
				m = p.name.match(name)
			}
			if m {
				return c.decide(DomainExec, opExec, cmd, r.allow, r.idx)
			}
		}
	}
	return c.decide(DomainExec, opExec, cmd, false, -1)
}

func canonCommand(cmd string) (name, path string, isPath, ok bool) {
	if cmd == "" || len(cmd) > MaxTargetLen {
		return "", "", false, false
	}
	if strings.IndexByte(cmd, '/') < 0 {
		if strings.IndexByte(cmd, 0) >= 0 || cmd == "." || cmd == ".." {
			return "", "", false, false
		}
		return cmd, "", false, true
	}
	p, ok := canonPath(cmd)
	if !ok || p == "" {
		return "", "", false, false
	}
	return p[strings.LastIndexByte(p, '/')+1:], p, true, true
}

// CheckEnv reports whether the guest may see the environment variable key.
// Empty keys, and keys holding '=' or NUL, are denied.
func (c *Checker) CheckEnv(key string) error {
	ok := key != "" && len(key) <= MaxTargetLen && strings.IndexByte(key, '=') < 0 &&
		strings.IndexByte(key, 0) < 0
	if c == nil || !ok {
		return c.decide(DomainEnv, opEnv, key, false, -1)
	}
	return c.checkFlat(c.env, DomainEnv, opEnv, key)
}

// CheckTool reports whether the guest may call the host tool name. Empty
// names and names holding NUL are denied.
func (c *Checker) CheckTool(name string) error {
	ok := name != "" && len(name) <= MaxTargetLen && strings.IndexByte(name, 0) < 0
	if c == nil || !ok {
		return c.decide(DomainTool, opTool, name, false, -1)
	}
	return c.checkFlat(c.tool, DomainTool, opTool, name)
}

func (c *Checker) checkFlat(rules []flatRule, d Domain, op, target string) error {
	for _, r := range rules {
		for k := range r.pats {
			if r.pats[k].match(target) {
				return c.decide(d, op, target, r.allow, r.idx)
			}
		}
	}
	return c.decide(d, op, target, false, -1)
}

// CheckNetAddr decides op on addr:port, an address the network layer is
// about to connect to, send to or listen on. It differs from CheckNet in
// two ways that close the holes a plain address check leaves:
//
//   - scope, when valid, is a special range holding addr (loopback,
//     private, link-local, multicast, ...: see kernel/netstack). Such an
//     address is reachable only when the deciding rule is an allow rule
//     that names addr by an address pattern, or by a prefix pattern inside
//     scope. "*", name globs and wider prefixes ("0.0.0.0/0") never open
//     it, so a policy that allows "the internet" does not allow the cloud
//     metadata service or the host's loopback.
//   - viaName says addr came from resolving a name that the caller has
//     already checked with CheckNet. Then only rules that match addr
//     through an address, a prefix or a dotted-IPv4 glob are considered
//     ("*" is not: it said nothing about this address), and when none
//     matches the name's permission stands. A deny rule on an address or
//     prefix still wins over an allowed name, so DNS cannot lead around it.
//
// addr should be unmapped (an IPv4-mapped IPv6 address is folded to IPv4
// here too). The error is a *DeniedError as for CheckNet.
func (c *Checker) CheckNetAddr(op NetOp, addr netip.Addr, port int, scope netip.Prefix, viaName bool) error {
	host := addr.String()
	i, okOp := netOpIndex(op)
	if c == nil || !okOp || !addr.IsValid() || addr.Zone() != "" || port < 0 || port > 65535 {
		return c.decideNet(op, host, port, false, -1)
	}
	t := ipTarget(addr)
	if addr.Is4() {
		t.name = host
	}
	for _, r := range c.net[i] {
		matched, explicit := false, false
		for k := range r.pats {
			p := &r.pats[k]
			if p.portLo > port || port > p.portHi || !p.matchHost(&t) {
				continue
			}
			if viaName && p.kind == hostAny {
				continue
			}
			matched = true
			if p.explicitIn(scope) {
				explicit = true
			}
		}
		if !matched {
			continue
		}
		if r.allow && scope.IsValid() && !explicit {
			return c.decideNet(op, host, port, false, r.idx)
		}
		return c.decideNet(op, host, port, r.allow, r.idx)
	}
	// No rule matched: an allowed name stands, unless the address is special.
	return c.decideNet(op, host, port, viaName && !scope.IsValid(), -1)
}
