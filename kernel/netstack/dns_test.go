package netstack_test

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/policy"
)

// dnsServer is a real DNS server on the host's loopback (UDP). Each name
// answers with its list of addresses in turn, one per query, the last one
// repeating: a rebinding name is {public, private}.
type dnsServer struct {
	pc      net.PacketConn
	queries atomic.Int32
	mu      sync.Mutex
	answers map[string][]netip.Addr
	served  map[string]int
}

func newDNSServer(t *testing.T, answers map[string][]netip.Addr) *dnsServer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &dnsServer{pc: pc, answers: answers, served: make(map[string]int)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp, ok := d.answer(buf[:n]); ok {
				_, _ = pc.WriteTo(resp, from)
			}
		}
	}()
	t.Cleanup(func() { _ = pc.Close(); <-done })
	return d
}

// answer builds the response to one query: A or AAAA records for a known
// name, NXDOMAIN otherwise.
func (d *dnsServer) answer(q []byte) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil {
		return nil, false
	}
	question, err := p.Question()
	if err != nil {
		return nil, false
	}
	d.queries.Add(1)
	name := strings.TrimSuffix(strings.ToLower(question.Name.String()), ".")
	d.mu.Lock()
	list, known := d.answers[name]
	var addr netip.Addr
	if known {
		i := min(d.served[name], len(list)-1)
		addr = list[i]
		if question.Type == dnsmessage.TypeA {
			d.served[name]++ // the resolver asks A and AAAA; count rounds by A
		}
	}
	d.mu.Unlock()
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionAvailable: true}
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	_ = b.StartQuestions()
	_ = b.Question(question)
	_ = b.StartAnswers()
	rr := dnsmessage.ResourceHeader{Name: question.Name, Class: dnsmessage.ClassINET, TTL: 0}
	switch {
	case known && question.Type == dnsmessage.TypeA && addr.Is4():
		_ = b.AResource(rr, dnsmessage.AResource{A: addr.As4()})
	case known && question.Type == dnsmessage.TypeAAAA && addr.Is6():
		_ = b.AAAAResource(rr, dnsmessage.AAAAResource{AAAA: addr.As16()})
	}
	out, err := b.Finish()
	return out, err == nil
}

// resolver is Go's real resolver, pointed at the test server.
func (d *dnsServer) resolver() *net.Resolver {
	addr := d.pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dl net.Dialer
		return dl.DialContext(ctx, "udp", addr)
	}}
}

func TestResolve(t *testing.T) {
	a := netip.MustParseAddr
	dns := newDNSServer(t, map[string][]netip.Addr{
		"api.example.test": {a("93.184.216.34")},
		"v6.example.test":  {a("2606:4700::1111")},
	})
	e := newEnv(t, &policy.Policy{Net: []policy.NetRule{
		{Effect: policy.Allow, Ops: []policy.NetOp{policy.NetDNS}, Hosts: []string{"*.example.test"}},
	}}, withResolver(dns.resolver()))
	ctx := ctxT(t)
	got, err := e.st.Resolve(ctx, "api.example.test")
	if err != nil || len(got) != 1 || got[0] != a("93.184.216.34") {
		t.Errorf("resolve api: %v %v", got, err)
	}
	if got, err := e.st.Resolve(ctx, "V6.Example.Test."); err != nil || len(got) != 1 || got[0] != a("2606:4700::1111") {
		t.Errorf("resolve v6: %v %v", got, err)
	}
	_, err = e.st.Resolve(ctx, "missing.example.test")
	wantErrno(t, "missing name", err, errno.ENOENT)
	before := dns.queries.Load()
	_, err = e.st.Resolve(ctx, "secret.internal")
	wantErrno(t, "denied name", err, errno.EACCES)
	if dns.queries.Load() != before {
		t.Error("a denied name was sent to the DNS server")
	}
	for host, want := range map[string]string{"localhost": "127.0.0.1", "0x7f000001": "127.0.0.1", "::1": "::1", "127.1": "127.0.0.1"} {
		got, err := e.st.Resolve(ctx, host)
		if err != nil || got[0] != a(want) {
			t.Errorf("resolve %s = %v %v, want %s first", host, got, err, want)
		}
	}
	if dns.queries.Load() != before {
		t.Error("localhost or an IP spelling went to DNS")
	}
	_, err = e.st.Resolve(ctx, "bad name.test")
	wantErrno(t, "malformed", err, errno.EINVAL)
}

// TestDNSRebinding: a name the policy allows first resolves to a public
// address, then to private or loopback ones. The address checks made after
// resolution stop every rebound connection; an address rule still wins
// over the name.
func TestDNSRebinding(t *testing.T) {
	srv := newHostServer(t, func(c net.Conn) { _, _ = c.Write([]byte("host")) })
	port := strconv.Itoa(int(srv.port))
	a := netip.MustParseAddr
	dns := newDNSServer(t, map[string][]netip.Addr{
		"rebind.test":   {a("93.184.216.34"), a("169.254.169.254")},
		"loop.test":     {a("127.0.0.1")},
		"private.test":  {a("10.1.2.3")},
		"mapped.test":   {a("::ffff:169.254.169.254")},
		"denied.test":   {a("198.51.99.7")},
		"explicit.test": {a("127.0.0.1")},
	})
	pol := policy.DenyAll().AllowNet("*.test").DenyNet("198.51.99.0/24")
	e := newEnv(t, pol, withResolver(dns.resolver()))
	ctx := ctxT(t)

	// First answer: a public address, allowed through the name.
	got, err := e.st.Resolve(ctx, "rebind.test")
	if err != nil || len(got) != 1 || got[0] != a("93.184.216.34") {
		t.Fatalf("first resolve: %v %v", got, err)
	}
	// Second answer: the metadata service. The connect resolves again and
	// refuses the address.
	for _, host := range []string{"rebind.test", "private.test", "mapped.test", "denied.test"} {
		s := sock(t, e.st, netstack.AFInet6, netstack.SockStream, false)
		wantErrno(t, "connect "+host, s.Connect(ctx, netstack.HostAddr(host, 80)), errno.EACCES)
		s.DecRef()
		u := sock(t, e.st, netstack.AFInet6, netstack.SockDgram, false)
		to := netstack.HostAddr(host, 53)
		_, err := u.SendTo(ctx, []byte("x"), 0, &to)
		wantErrno(t, "sendto "+host, err, errno.EACCES)
		u.DecRef()
	}
	// A name rebound to loopback reaches the VM, not the host server.
	s := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
	wantErrno(t, "loop.test", s.Connect(ctx, netstack.HostAddr("loop.test", srv.port)), errno.ECONNREFUSED)
	s.DecRef()
	if d := e.dialed(); len(d) != 0 {
		t.Errorf("host dials: %v", d)
	}
	if srv.accepted.Load() != 0 {
		t.Error("the host server was reached")
	}
	// With the loopback address named explicitly, the name may reach it.
	e2 := newEnv(t, policy.DenyAll().AllowNet("explicit.test", "127.0.0.1:"+port), withResolver(dns.resolver()))
	s = sock(t, e2.st, netstack.AFInet, netstack.SockStream, false)
	defer s.DecRef()
	if err := s.Connect(ctx, netstack.HostAddr("explicit.test", srv.port)); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s); got != "host" {
		t.Errorf("read %q", got)
	}
}

func TestResolveTimeout(t *testing.T) {
	// A DNS server that never answers.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	d := &dnsServer{pc: pc}
	lim := netstack.DefaultLimits()
	lim.DNSTimeout = 100 * time.Millisecond
	e := newEnv(t, allowAll(), withResolver(d.resolver()), withLimits(lim))
	start := time.Now()
	_, err = e.st.Resolve(ctxT(t), "slow.example")
	wantErrno(t, "lookup against a silent server", err, errno.ETIMEDOUT)
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %v", el)
	}
	s := sock(t, e.st, netstack.AFInet, netstack.SockStream, false)
	defer s.DecRef()
	wantErrno(t, "connect by name", s.Connect(ctxT(t), netstack.HostAddr("slow.example", 80)), errno.ETIMEDOUT)
}
