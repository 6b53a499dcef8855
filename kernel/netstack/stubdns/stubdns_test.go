package stubdns

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// server is a real DNS server on the loopback, UDP and TCP on one port.
// records maps a lower-case absolute name to its answer: "cname:target" or
// addresses. Names in truncate are answered with TC over UDP.
type server struct {
	addr     netip.AddrPort
	records  map[string][]string
	truncate map[string]bool
	asked    chan string
}

func newServer(t *testing.T, records map[string][]string, truncate map[string]bool) *server {
	t.Helper()
	// The server answers on one port over UDP and TCP; the UDP port the
	// kernel picks may be taken for TCP by another program, so a few
	// ports are tried.
	var pc net.PacketConn
	var ln net.Listener
	for attempt := 0; ; attempt++ {
		var err error
		pc, err = net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln, err = net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			break
		}
		_ = pc.Close()
		if attempt == 20 {
			t.Fatal(err)
		}
	}
	s := &server{addr: netip.MustParseAddrPort(pc.LocalAddr().String()), records: records, truncate: truncate, asked: make(chan string, 100)}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out := s.answer(buf[:n], true); out != nil {
				_, _ = pc.WriteTo(out, from)
			}
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var l [2]byte
				if _, err := io.ReadFull(c, l[:]); err != nil {
					return
				}
				q := make([]byte, binary.BigEndian.Uint16(l[:]))
				if _, err := io.ReadFull(c, q); err != nil {
					return
				}
				out := s.answer(q, false)
				binary.BigEndian.PutUint16(l[:], uint16(len(out)))
				_, _ = c.Write(append(l[:], out...))
			}()
		}
	}()
	t.Cleanup(func() { _ = pc.Close(); _ = ln.Close() })
	return s
}

func (s *server) answer(q []byte, udp bool) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil {
		return nil
	}
	question, err := p.Question()
	if err != nil {
		return nil
	}
	name := strings.ToLower(question.Name.String())
	select {
	case s.asked <- name:
	default:
	}
	rh := dnsmessage.Header{ID: h.ID, Response: true, RecursionAvailable: true}
	if udp && s.truncate[name] {
		rh.Truncated = true
	}
	recs, known := s.records[name]
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	_ = b.StartQuestions()
	_ = b.Question(question)
	_ = b.StartAnswers()
	if !rh.Truncated {
		owner := question.Name
		for len(recs) > 0 {
			if target, ok := strings.CutPrefix(recs[0], "cname:"); ok {
				tn := dnsmessage.MustNewName(target)
				_ = b.CNAMEResource(dnsmessage.ResourceHeader{Name: owner, Class: dnsmessage.ClassINET}, dnsmessage.CNAMEResource{CNAME: tn})
				owner, recs = tn, s.records[target]
				continue
			}
			for _, r := range recs {
				a := netip.MustParseAddr(r)
				rr := dnsmessage.ResourceHeader{Name: owner, Class: dnsmessage.ClassINET}
				switch {
				case a.Is4() && question.Type == dnsmessage.TypeA:
					_ = b.AResource(rr, dnsmessage.AResource{A: a.As4()})
				case a.Is6() && question.Type == dnsmessage.TypeAAAA:
					_ = b.AAAAResource(rr, dnsmessage.AAAAResource{AAAA: a.As16()})
				}
			}
			break
		}
		// An unrelated record must not be taken as an answer.
		_ = b.AResource(dnsmessage.ResourceHeader{Name: dnsmessage.MustNewName("stray.test."), Class: dnsmessage.ClassINET},
			dnsmessage.AResource{A: [4]byte{6, 6, 6, 6}})
	}
	out, _ := b.Finish()
	return out
}

func (s *server) resolver(search ...string) *Resolver {
	return &Resolver{Config: &Config{Servers: []netip.AddrPort{s.addr}, Search: search, Ndots: 1, Timeout: 2 * time.Second, Attempts: 1}}
}

func lookup(t *testing.T, r *Resolver, host string) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	var out []string
	for _, a := range addrs {
		out = append(out, a.String())
	}
	slices.Sort(out)
	return out, err
}

func TestLookup(t *testing.T) {
	s := newServer(t, map[string][]string{
		"api.example.test.":  {"192.0.2.1", "2001:db8::1"},
		"www.example.test.":  {"cname:edge.cdn.test."},
		"edge.cdn.test.":     {"198.51.100.7"},
		"big.example.test.":  {"192.0.2.9"},
		"svc.corp.internal.": {"10.1.2.3"},
	}, map[string]bool{"big.example.test.": true})
	r := s.resolver("corp.internal")
	for host, want := range map[string][]string{
		"api.example.test":  {"192.0.2.1", "2001:db8::1"},
		"www.example.test":  {"198.51.100.7"}, // CNAME chain, stray record ignored
		"big.example.test.": {"192.0.2.9"},    // truncated over UDP, answered over TCP
		"svc":               {"10.1.2.3"},     // search list
	} {
		got, err := lookup(t, r, host)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v %v, want %v", host, got, err, want)
		}
	}
	var de *net.DNSError
	if _, err := lookup(t, r, "missing.example.test"); !errors.As(err, &de) || !de.IsNotFound {
		t.Errorf("missing name: %v, want IsNotFound", err)
	}
}

// Names of the host's /etc/hosts (other than localhost) are not answered
// unless DNS knows them: the file is never read.
func TestHostsFileNotRead(t *testing.T) {
	f, err := os.Open("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		for _, n := range fields[min(1, len(fields)):] {
			if !strings.Contains(n, "localhost") {
				names = append(names, n)
			}
		}
	}
	// A name planted on purpose when the machine's file has none.
	s := newServer(t, map[string][]string{}, nil)
	r := s.resolver()
	for _, n := range names {
		addrs, err := lookup(t, r, n)
		var de *net.DNSError
		if !errors.As(err, &de) || !de.IsNotFound {
			t.Errorf("%s (from /etc/hosts) resolved: %v %v", n, addrs, err)
		}
	}
	if len(names) == 0 {
		t.Log("/etc/hosts names no host but localhost; the check ran on none")
	}
}

func TestParseConfig(t *testing.T) {
	c := ParseConfig(strings.NewReader("# comment\nnameserver 10.0.0.1\nnameserver ::1 ; x\nsearch a.test b.test.\noptions ndots:5 timeout:0 attempts:9 rotate\n"))
	want := []netip.AddrPort{netip.MustParseAddrPort("10.0.0.1:53"), netip.MustParseAddrPort("[::1]:53")}
	if !slices.Equal(c.Servers, want) || !slices.Equal(c.Search, []string{"a.test", "b.test"}) ||
		c.Ndots != 5 || c.Timeout != time.Second || c.Attempts != maxAttempts {
		t.Errorf("%+v", c)
	}
	if c := ParseConfig(strings.NewReader("")); len(c.Servers) != 2 || c.Ndots != 1 {
		t.Errorf("defaults: %+v", c)
	}
	if got := candidates("svc", Config{Ndots: 1, Search: []string{"x.test"}}); !slices.Equal(got, []string{"svc.x.test.", "svc."}) {
		t.Errorf("candidates: %q", got)
	}
}
