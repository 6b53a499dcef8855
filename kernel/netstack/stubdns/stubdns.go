// Package stubdns is the DNS resolver guests use: a stub that asks the
// nameservers of the host's resolv.conf and nothing else.
//
// Go's own resolver (net.Resolver, even with PreferGo) answers from the
// host's /etc/hosts before it asks DNS, and so would show a guest the
// host's private names (a container's own name, "vm", an operator's
// shortcuts to internal services). This resolver never reads /etc/hosts or
// nsswitch.conf and has no mDNS: a name resolves for a guest only if the
// configured nameservers know it. "localhost" is the caller's business
// (netstack answers it with the VM's loopback before asking).
//
// It implements resolv.conf's nameserver, search, domain and the options
// ndots, timeout and attempts; queries A and AAAA concurrently over UDP
// (EDNS0, 1232-byte payload), retries over TCP when an answer is
// truncated, and follows CNAME chains inside an answer.
package stubdns

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// DefaultConfPath is the resolver configuration read when
// Resolver.ConfPath is empty.
const DefaultConfPath = "/etc/resolv.conf"

// Defaults of resolv.conf(5), as glibc and Go use them.
const (
	defaultNdots    = 1
	defaultTimeout  = 5 * time.Second
	defaultAttempts = 2
	maxNdots        = 15
	maxAttempts     = 5
	maxTimeout      = 30 * time.Second
	// udpSize is the EDNS0 payload size announced: the DNS flag day 2020
	// value, which avoids IP fragmentation.
	udpSize = 1232
	// maxCNAMEs bounds the chain followed inside one answer.
	maxCNAMEs = 10
)

// Config is a parsed resolv.conf.
type Config struct {
	// Servers are the nameservers, in order (port 53 unless the address
	// says otherwise); empty means 127.0.0.1 and ::1, as glibc does.
	Servers []netip.AddrPort
	// Search is the search list, without trailing dots.
	Search   []string
	Ndots    int
	Timeout  time.Duration
	Attempts int
}

// ParseConfig reads resolv.conf(5) text. Unknown lines and options are
// ignored, as the C library ignores them.
func ParseConfig(r io.Reader) Config {
	c := Config{Ndots: defaultNdots, Timeout: defaultTimeout, Attempts: defaultAttempts}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "nameserver":
			if a, err := netip.ParseAddr(f[1]); err == nil && len(c.Servers) < 3 {
				c.Servers = append(c.Servers, netip.AddrPortFrom(a, 53))
			}
		case "domain":
			c.Search = []string{strings.TrimSuffix(f[1], ".")}
		case "search":
			c.Search = c.Search[:0]
			for _, d := range f[1:] {
				if d = strings.TrimSuffix(d, "."); d != "" {
					c.Search = append(c.Search, d)
				}
			}
		case "options":
			for _, o := range f[1:] {
				k, v, _ := strings.Cut(o, ":")
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					continue
				}
				switch k {
				case "ndots":
					c.Ndots = min(n, maxNdots)
				case "timeout":
					c.Timeout = min(max(time.Duration(n)*time.Second, time.Second), maxTimeout)
				case "attempts":
					c.Attempts = min(max(n, 1), maxAttempts)
				}
			}
		}
	}
	if len(c.Servers) == 0 {
		c.Servers = []netip.AddrPort{
			netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), 53),
			netip.AddrPortFrom(netip.IPv6Loopback(), 53),
		}
	}
	return c
}

// Resolver resolves names with DNS only. The zero value reads
// DefaultConfPath on first use and dials with a plain net.Dialer. Its
// methods are safe for concurrent use.
type Resolver struct {
	// ConfPath is the resolv.conf to read; empty means DefaultConfPath.
	ConfPath string
	// Config, if set, is used instead of reading ConfPath.
	Config *Config
	// Dial connects to a nameserver ("udp" or "tcp"); nil uses
	// net.Dialer. Tests point it at a server of their own.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)

	once sync.Once
	conf Config
}

// config returns the configuration, reading it once. A missing or
// unreadable file gives the defaults (the loopback nameservers).
func (r *Resolver) config() Config {
	r.once.Do(func() {
		if r.Config != nil {
			r.conf = *r.Config
			if len(r.conf.Servers) == 0 || r.conf.Attempts <= 0 || r.conf.Timeout <= 0 {
				def := ParseConfig(strings.NewReader(""))
				if len(r.conf.Servers) == 0 {
					r.conf.Servers = def.Servers
				}
				if r.conf.Attempts <= 0 {
					r.conf.Attempts = def.Attempts
				}
				if r.conf.Timeout <= 0 {
					r.conf.Timeout = def.Timeout
				}
			}
			return
		}
		path := r.ConfPath
		if path == "" {
			path = DefaultConfPath
		}
		b, _ := os.ReadFile(path)
		r.conf = ParseConfig(bytes.NewReader(b))
	})
	return r.conf
}

// LookupNetIP resolves host to addresses; network is "ip", "ip4" or "ip6".
// Errors are *net.DNSError: IsNotFound when every candidate name is
// NXDOMAIN or has no address record, IsTimeout when no server answered in
// time, IsTemporary for other failures.
func (r *Resolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	var types []dnsmessage.Type
	switch network {
	case "ip":
		types = []dnsmessage.Type{dnsmessage.TypeA, dnsmessage.TypeAAAA}
	case "ip4":
		types = []dnsmessage.Type{dnsmessage.TypeA}
	case "ip6":
		types = []dnsmessage.Type{dnsmessage.TypeAAAA}
	default:
		return nil, &net.DNSError{Err: "unknown network " + network, Name: host}
	}
	if host == "" || len(host) > 253 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	conf := r.config()
	for _, name := range candidates(host, conf) {
		addrs, err := r.lookupName(ctx, conf, name, types)
		switch {
		case err == nil:
			return addrs, nil
		case !errors.Is(err, errNotFound):
			// A failure, not an answer: trying the next name could
			// return a wrong one.
			return nil, dnsError(host, err)
		case ctx.Err() != nil:
			return nil, dnsError(host, ctx.Err())
		}
	}
	return nil, dnsError(host, errNotFound)
}

var (
	errNotFound = errors.New("no such host")
	errServer   = errors.New("server misbehaving")
)

func dnsError(host string, err error) *net.DNSError {
	de := &net.DNSError{Err: err.Error(), Name: host}
	switch {
	case errors.Is(err, errNotFound):
		de.IsNotFound = true
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		de.IsTimeout = true
		de.IsTemporary = true
	default:
		de.IsTemporary = true
	}
	return de
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// candidates lists the absolute names to try for host, in order, as
// resolv.conf's search list and ndots decide.
func candidates(host string, c Config) []string {
	if strings.HasSuffix(host, ".") {
		return []string{host}
	}
	var out []string
	asIs := host + "."
	if strings.Count(host, ".") >= c.Ndots {
		out = append(out, asIs)
	}
	for _, d := range c.Search {
		if n := host + "." + d + "."; len(n) <= 254 {
			out = append(out, n)
		}
	}
	if strings.Count(host, ".") < c.Ndots {
		out = append(out, asIs)
	}
	return out
}

// lookupName asks for each type of name concurrently and merges the
// addresses (A first). errNotFound means every type was NXDOMAIN or empty.
func (r *Resolver) lookupName(ctx context.Context, conf Config, name string, types []dnsmessage.Type) ([]netip.Addr, error) {
	qn, err := dnsmessage.NewName(name)
	if err != nil {
		return nil, errNotFound
	}
	type result struct {
		addrs []netip.Addr
		err   error
	}
	res := make([]result, len(types))
	var wg sync.WaitGroup
	for i, t := range types {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := r.query(ctx, conf, qn, t)
			res[i] = result{a, err}
		}()
	}
	wg.Wait()
	var out []netip.Addr
	var failure error
	for _, x := range res {
		out = append(out, x.addrs...)
		if x.err != nil && !errors.Is(x.err, errNotFound) {
			failure = x.err
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	if failure != nil {
		return nil, failure
	}
	return nil, errNotFound
}

// query asks the servers in turn, conf.Attempts rounds, for one record
// type of name; the first definite answer (records, NODATA or NXDOMAIN)
// ends it.
func (r *Resolver) query(ctx context.Context, conf Config, name dnsmessage.Name, t dnsmessage.Type) ([]netip.Addr, error) {
	var lastErr error = errServer
	for range conf.Attempts {
		for _, srv := range conf.Servers {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			addrs, err := r.exchange(ctx, conf.Timeout, srv, name, t)
			if err == nil || errors.Is(err, errNotFound) {
				return addrs, err
			}
			lastErr = err
		}
	}
	return nil, lastErr
}

// exchange sends one query to srv over UDP (then TCP if the answer was
// truncated) and reads its answer.
func (r *Resolver) exchange(ctx context.Context, timeout time.Duration, srv netip.AddrPort, name dnsmessage.Name, t dnsmessage.Type) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id, q, err := newQuery(name, t)
	if err != nil {
		return nil, err
	}
	resp, err := r.roundTrip(ctx, "udp", srv, q)
	if err != nil {
		return nil, err
	}
	addrs, truncated, err := parseAnswer(resp, id, name, t)
	if !truncated {
		return addrs, err
	}
	if resp, err = r.roundTrip(ctx, "tcp", srv, q); err != nil {
		return nil, err
	}
	addrs, _, err = parseAnswer(resp, id, name, t)
	return addrs, err
}

func (r *Resolver) dial(ctx context.Context, network string, srv netip.AddrPort) (net.Conn, error) {
	if r.Dial != nil {
		return r.Dial(ctx, network, srv.String())
	}
	var d net.Dialer
	return d.DialContext(ctx, network, srv.String())
}

// roundTrip sends q and returns the response with the same ID (UDP
// answers with another ID are dropped, as stray or spoofed).
func (r *Resolver) roundTrip(ctx context.Context, network string, srv netip.AddrPort, q []byte) ([]byte, error) {
	c, err := r.dial(ctx, network, srv)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	id := binary.BigEndian.Uint16(q)
	if network == "tcp" {
		msg := make([]byte, 2+len(q))
		binary.BigEndian.PutUint16(msg, uint16(len(q)))
		copy(msg[2:], q)
		if _, err := c.Write(msg); err != nil {
			return nil, err
		}
		var l [2]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			return nil, err
		}
		resp := make([]byte, binary.BigEndian.Uint16(l[:]))
		if _, err := io.ReadFull(c, resp); err != nil {
			return nil, err
		}
		return resp, nil
	}
	if _, err := c.Write(q); err != nil {
		return nil, err
	}
	buf := make([]byte, udpSize)
	for {
		n, err := c.Read(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		if n >= 12 && binary.BigEndian.Uint16(buf) == id {
			return buf[:n], nil
		}
	}
}

// newQuery builds a recursive query for name and t with a random ID and an
// EDNS0 record.
func newQuery(name dnsmessage.Name, t dnsmessage.Type) (uint16, []byte, error) {
	var idb [2]byte
	_, _ = rand.Read(idb[:])
	id := binary.BigEndian.Uint16(idb[:])
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), dnsmessage.Header{ID: id, RecursionDesired: true})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return 0, nil, err
	}
	if err := b.Question(dnsmessage.Question{Name: name, Type: t, Class: dnsmessage.ClassINET}); err != nil {
		return 0, nil, err
	}
	if err := b.StartAdditionals(); err != nil {
		return 0, nil, err
	}
	var rh dnsmessage.ResourceHeader
	if err := rh.SetEDNS0(udpSize, dnsmessage.RCodeSuccess, false); err != nil {
		return 0, nil, err
	}
	if err := b.OPTResource(rh, dnsmessage.OPTResource{}); err != nil {
		return 0, nil, err
	}
	q, err := b.Finish()
	return id, q, err
}

// parseAnswer reads a response to the query (id, name, t): the addresses
// of name or of the names it is a CNAME of. truncated asks for a TCP
// retry; errNotFound is NXDOMAIN or an answer without such records;
// SERVFAIL, REFUSED and malformed or mismatched answers are errServer.
func parseAnswer(resp []byte, id uint16, name dnsmessage.Name, t dnsmessage.Type) (addrs []netip.Addr, truncated bool, err error) {
	var p dnsmessage.Parser
	h, err := p.Start(resp)
	if err != nil || h.ID != id || !h.Response {
		return nil, false, errServer
	}
	if h.Truncated {
		return nil, true, nil
	}
	q, err := p.Question()
	if err != nil || q.Type != t || !strings.EqualFold(q.Name.String(), name.String()) {
		return nil, false, errServer
	}
	if err := p.SkipAllQuestions(); err != nil {
		return nil, false, errServer
	}
	switch h.RCode {
	case dnsmessage.RCodeSuccess:
	case dnsmessage.RCodeNameError:
		return nil, false, errNotFound
	default:
		return nil, false, fmt.Errorf("%w: %v", errServer, h.RCode)
	}
	// Names the answer may hold records for: name, then each CNAME target.
	want := map[string]bool{strings.ToLower(name.String()): true}
	var a4, a6 []owned
	type cname struct{ from, to string }
	var cnames []cname
	for {
		rh, err := p.AnswerHeader()
		if err == dnsmessage.ErrSectionDone {
			break
		}
		if err != nil {
			return nil, false, errServer
		}
		owner := strings.ToLower(rh.Name.String())
		switch rh.Type {
		case dnsmessage.TypeA:
			r, err := p.AResource()
			if err != nil {
				return nil, false, errServer
			}
			a4 = append(a4, owned{owner, netip.AddrFrom4(r.A)})
		case dnsmessage.TypeAAAA:
			r, err := p.AAAAResource()
			if err != nil {
				return nil, false, errServer
			}
			a6 = append(a6, owned{owner, netip.AddrFrom16(r.AAAA)})
		case dnsmessage.TypeCNAME:
			r, err := p.CNAMEResource()
			if err != nil {
				return nil, false, errServer
			}
			cnames = append(cnames, cname{owner, strings.ToLower(r.CNAME.String())})
			continue
		default:
			if err := p.SkipAnswer(); err != nil {
				return nil, false, errServer
			}
			continue
		}
	}
	// Follow the chain from name, in whatever order the records came.
	for range maxCNAMEs {
		grew := false
		for _, c := range cnames {
			if want[c.from] && !want[c.to] {
				want[c.to] = true
				grew = true
			}
		}
		if !grew {
			break
		}
	}
	addrs = pick(a4, want)
	addrs = append(addrs, pick(a6, want)...)
	if len(addrs) == 0 {
		return nil, false, errNotFound
	}
	return addrs, false, nil
}

// owned is an address record with its owner name.
type owned struct {
	owner string
	addr  netip.Addr
}

// pick returns the addresses whose owner is in want.
func pick(list []owned, want map[string]bool) []netip.Addr {
	var out []netip.Addr
	for _, o := range list {
		if want[o.owner] {
			out = append(out, o.addr)
		}
	}
	return out
}
