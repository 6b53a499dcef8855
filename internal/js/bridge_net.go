package js

// The network half of the bridge: sockets are kernel descriptors
// (netstack), so reads and writes of a connected stream go through the
// same asynchronous reader and writer as pipes (bridge_io.go). What only
// sockets have is here: socket, bind, listen, connect, accept, names,
// options, shutdown, datagrams and name lookups. Blocking kernel calls
// run on goroutines and report to the loop; none holds the isolate.

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/netstack"
	"github.com/secexec/secexec/kernel/vfs"
)

// acceptBackoff is how long an acceptor waits after EMFILE or ENFILE.
const acceptBackoff = 20 * time.Millisecond

// acceptor accepts connections on a listening descriptor until stopped,
// one at a time: each waits until the loop delivered the previous one.
type acceptor struct {
	ref    bool
	cancel context.CancelFunc
}

// sockAddr is an address as node reports it (socket.address(),
// remoteAddress, dns results).
type sockAddr struct {
	Address string `json:"address,omitempty"`
	Family  string `json:"family,omitempty"`
	Port    int    `json:"port"`
	Path    string `json:"path,omitempty"`
}

func toSockAddr(a netstack.Addr) sockAddr {
	if a.Family == netstack.AFUnix {
		return sockAddr{Path: a.Path}
	}
	ip := a.IP.Addr()
	fam := "IPv4"
	if ip.Is6() && !ip.Is4In6() {
		fam = "IPv6"
	}
	return sockAddr{Address: ip.String(), Family: fam, Port: int(a.IP.Port())}
}

func addrJSON(a netstack.Addr) string {
	b, _ := json.Marshal(toSockAddr(a))
	return string(b)
}

// netAddr builds the kernel address of (host, port): a Unix socket path
// when port is negative, an IP literal, or a name the kernel resolves
// (and checks against the policy by name and by address).
func netAddr(host string, port int) (netstack.Addr, error) {
	if port < 0 {
		if host == "" || strings.IndexByte(host, 0) >= 0 {
			return netstack.Addr{}, errno.EINVAL
		}
		return netstack.UnixAddr(host), nil
	}
	if port > 65535 {
		return netstack.Addr{}, errno.EINVAL
	}
	if host == "" {
		return netstack.InetAddr(netip.AddrPortFrom(netip.IPv6Unspecified(), uint16(port))), nil
	}
	ip, isIP, err := netstack.ParseHost(host)
	if err != nil {
		return netstack.Addr{}, err
	}
	if isIP {
		return netstack.InetAddr(netip.AddrPortFrom(ip, uint16(port))), nil
	}
	return netstack.HostAddr(host, uint16(port)), nil
}

// startOp runs op on a goroutine as a request that keeps the loop alive,
// and posts its result as an event of kind with id.
func (r *rt) startOp(kind string, id int, op func(ctx context.Context) (payload string, err error)) error {
	if r.pending >= maxHandles {
		return errno.EAGAIN
	}
	r.pending++
	go func() {
		payload, err := op(r.ctx)
		ev := event{kind: kind, a: id, payload: payload}
		if err != nil {
			ev.code = errnoName(err)
			var te *kernel.TLSError
			if errors.As(err, &te) {
				ev.code, ev.payload = te.Code, te.Err.Error()
			}
		}
		r.post(r.ctx, ev)
	}()
	return nil
}

func (r *rt) startAcceptor(fd, h int) error {
	if len(r.acceptors) >= maxHandles {
		return errno.EMFILE
	}
	if _, dup := r.acceptors[h]; dup {
		return errno.EINVAL
	}
	// Hold the listening socket for the goroutine's lifetime.
	f, err := r.p.File(fd)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(r.ctx)
	r.acceptors[h] = &acceptor{ref: true, cancel: cancel}
	go func() {
		defer f.DecRef()
		for {
			nfd, peer, err := r.p.Accept(ctx, fd, vfs.O_CLOEXEC)
			if ctx.Err() != nil {
				if err == nil {
					_ = r.p.Close(nfd)
				}
				return
			}
			ev := event{kind: "netaccept", a: h, b: nfd}
			if err != nil {
				ev.code = errnoName(err)
				// A full VM (EMFILE, ENFILE) is reported, and accepting
				// goes on, as libuv does; anything else ends the server.
			} else {
				ev.payload = addrJSON(peer)
			}
			posted, acked := r.deliver(ctx, ev)
			if !posted && err == nil {
				_ = r.p.Close(nfd)
			}
			if !acked {
				return
			}
			if err != nil {
				if !errors.Is(err, errno.EMFILE) && !errors.Is(err, errno.ENFILE) {
					return
				}
				// Out of descriptors or sockets: the connection was
				// dropped (or waits in the backlog); retry after a pause
				// rather than spin while the VM is full.
				t := time.NewTimer(acceptBackoff)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return
				}
			}
		}
	}()
	return nil
}

// handleNet delivers the network events of the loop.
func (r *rt) handleNet(ev event) (bool, error) {
	switch ev.kind {
	case "netaccept":
		defer close(ev.ack)
		a := r.acceptors[ev.a]
		if a == nil {
			if ev.code == "" {
				_ = r.p.Close(ev.b)
			}
			return true, nil
		}
		return r.dispatchPayload("netaccept", ev.a, ev.b, ev.code, ev.payload)
	case "netconnect", "dns", "udpsend", "tls", "h2open", "h2write", "h2ping", "h2sop", "h2spush", "tool":
		r.pending--
		return r.dispatchPayload(ev.kind, ev.a, 0, ev.code, ev.payload)
	case "udpmsg":
		defer close(ev.ack)
		rd := r.readers[ev.a]
		if rd == nil {
			return true, nil
		}
		if ev.code != "" {
			delete(r.readers, ev.a)
			rd.stop()
		}
		n := copy(r.scratch, ev.data)
		return r.dispatchPayload("udpmsg", ev.a, n, ev.code, ev.payload)
	case "h2resp", "h2info", "h2data", "h2end", "h2sessclose":
		return r.handleH2(ev)
	case "h2sstream", "h2sdata", "h2sbodyend", "h2sclose", "h2ssessclose":
		return r.handleH2Server(ev)
	}
	return true, nil
}

// dispatchPayload calls the JavaScript handler of kind with (a, b, code
// or undefined, payload or undefined).
func (r *rt) dispatchPayload(kind string, a, b int, code, payload string) (bool, error) {
	und := v8.Undefined(r.iso)
	args := []v8.Valuer{r.str(kind), r.num(a), r.num(b), und, und}
	if code != "" {
		args[3] = r.str(code)
	}
	var pv *v8.Value
	if payload != "" {
		var err error
		if pv, err = r.string(payload); err == nil {
			args[4] = pv
		}
	}
	ok, err := r.call(r.dispatch, args...)
	for _, v := range args[1:3] {
		if val, isVal := v.(*v8.Value); isVal {
			val.Release()
		}
	}
	if pv != nil {
		pv.Release()
	}
	return ok, err
}

// startDatagramReader receives datagrams on fd and posts each, with its
// sender, as a "udpmsg" event for handle h.
func (r *rt) startDatagramReader(fd, h int) error {
	buf := make([]byte, netstack.MaxDatagram)
	return r.startReadLoop(fd, h, func(ctx context.Context, _ vfs.File) (event, bool) {
		n, from, err := r.p.RecvFrom(ctx, fd, buf, 0)
		ev := event{kind: "udpmsg"}
		if err != nil {
			ev.code = errnoName(err)
		} else {
			ev.data, ev.payload = append([]byte(nil), buf[:n]...), addrJSON(from)
		}
		return ev, err != nil
	})
}

// socket options by the names net.js uses.
var sockOpts = map[string][2]int{
	"nodelay":   {netstack.ProtoTCP, netstack.TCPNoDelay},
	"keepalive": {netstack.SolSocket, netstack.SoKeepAlive},
	"reuseaddr": {netstack.SolSocket, netstack.SoReuseAddr},
	"reuseport": {netstack.SolSocket, netstack.SoReusePort},
	"broadcast": {netstack.SolSocket, netstack.SoBroadcast},
	"rcvbuf":    {netstack.SolSocket, netstack.SoRcvBuf},
	"sndbuf":    {netstack.SolSocket, netstack.SoSndBuf},
}

// bridgeNetSocket makes a socket of domain (4, 6: IP; 1: Unix) and type
// (1: stream, 2: datagram): → its descriptor.
func bridgeNetSocket(r *rt, a *callArgs) (*v8.Value, error) {
	fam := map[int]netstack.Family{4: netstack.AFInet, 6: netstack.AFInet6, 1: netstack.AFUnix}[a.int(0)]
	st := map[int]netstack.Type{1: netstack.SockStream, 2: netstack.SockDgram}[a.int(1)]
	if fam == 0 || st == 0 {
		return nil, errno.EINVAL
	}
	fd, err := r.p.Socket(fam, st, 0, vfs.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return r.num(fd), nil
}

// bridgeNetSocketPair makes a connected pair of Unix stream sockets and
// returns their descriptors as "[a,b]": tls.js runs TLS on one end and
// carries a JavaScript stream's bytes on the other.
func bridgeNetSocketPair(r *rt, _ *callArgs) (*v8.Value, error) {
	a, b, err := r.p.Socketpair(netstack.AFUnix, netstack.SockStream, 0, vfs.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return r.str(fmt.Sprintf("[%d,%d]", a, b)), nil
}

// bridgeNetBind binds fd to (host, port), an address (see netAddr), not
// a name: JavaScript resolves names first.
func bridgeNetBind(r *rt, a *callArgs) (*v8.Value, error) {
	addr, err := netAddr(a.str(1), a.int(2))
	if err != nil {
		return nil, err
	}
	if addr.Name != "" {
		return nil, errno.EINVAL
	}
	return nil, r.p.Bind(r.ctx, a.int(0), addr)
}

// bridgeNetListen makes fd a listening socket.
func bridgeNetListen(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.p.Listen(a.int(0), a.int(1))
}

// bridgeNetConnect connects fd to (host, port) on a goroutine; request id
// ends with a "netconnect" event carrying the peer's address.
func bridgeNetConnect(r *rt, a *callArgs) (*v8.Value, error) {
	fd := a.int(0)
	addr, err := netAddr(a.str(1), a.int(2))
	if err != nil {
		return nil, err
	}
	return nil, r.startOp("netconnect", a.int(3), func(ctx context.Context) (string, error) {
		if err := r.p.Connect(ctx, fd, addr); err != nil {
			return "", err
		}
		peer, err := r.p.Getpeername(fd)
		if err != nil {
			return "", nil // reset already; the read reports it
		}
		return addrJSON(peer), nil
	})
}

// bridgeNetAcceptStart accepts connections on listening fd as
// "netaccept" events of handle h.
func bridgeNetAcceptStart(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.startAcceptor(a.int(0), a.int(1))
}

// bridgeNetAcceptStop stops acceptor h; an unknown one is ignored.
func bridgeNetAcceptStop(r *rt, a *callArgs) (*v8.Value, error) {
	h := a.int(0)
	if acc, ok := r.acceptors[h]; ok {
		delete(r.acceptors, h)
		acc.cancel()
	}
	return nil, nil
}

// bridgeNetAcceptRef sets whether acceptor h keeps the loop alive; an
// unknown one is ignored.
func bridgeNetAcceptRef(r *rt, a *callArgs) (*v8.Value, error) {
	if acc, ok := r.acceptors[a.int(0)]; ok {
		acc.ref = a.bool(1)
	}
	return nil, nil
}

// bridgeNetShutdown shuts down fd's sending side.
func bridgeNetShutdown(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.p.Shutdown(a.int(0), netstack.ShutWR)
}

// bridgeNetName is fd's own address, or with peer its peer's, as JSON.
func bridgeNetName(r *rt, a *callArgs) (*v8.Value, error) {
	get := r.p.Getsockname
	if a.bool(1) {
		get = r.p.Getpeername
	}
	addr, err := get(a.int(0))
	if err != nil {
		return nil, err
	}
	return r.string(addrJSON(addr))
}

// bridgeNetSetOpt sets fd's socket option name (one of sockOpts) to val.
func bridgeNetSetOpt(r *rt, a *callArgs) (*v8.Value, error) {
	opt, known := sockOpts[a.str(1)]
	if !known {
		return nil, errno.EINVAL
	}
	return nil, r.p.Setsockopt(a.int(0), opt[0], opt[1], int64(a.int(2)))
}

// bridgeDNSLookup resolves host on a goroutine; request id ends with a
// "dns" event carrying the addresses as JSON.
func bridgeDNSLookup(r *rt, a *callArgs) (*v8.Value, error) {
	host := a.str(0)
	if host == "" || len(host) > 1024 {
		return nil, errno.EINVAL
	}
	return nil, r.startOp("dns", a.int(1), func(ctx context.Context) (string, error) {
		addrs, err := r.p.Resolve(ctx, host)
		if err != nil {
			return "", err
		}
		out := make([]sockAddr, len(addrs))
		for i, a := range addrs {
			out[i] = toSockAddr(netstack.InetAddr(netip.AddrPortFrom(a, 0)))
		}
		b, err := json.Marshal(out)
		return string(b), err
	})
}

// bridgeUDPSend sends a datagram of data on fd on a goroutine, to (host,
// port) or, when both are absent or empty, to the connected peer; request
// id ends with a "udpsend" event.
func bridgeUDPSend(r *rt, a *callArgs) (*v8.Value, error) {
	fd, host, port, id := a.int(0), a.str(2), a.int(3), a.int(4)
	data := append([]byte(nil), a.bytes(1)...)
	var to *netstack.Addr
	if port != 0 || host != "" {
		addr, err := netAddr(host, port)
		if err != nil {
			return nil, err
		}
		to = &addr
	}
	return nil, r.startOp("udpsend", id, func(ctx context.Context) (string, error) {
		_, err := r.p.SendTo(ctx, fd, data, netstack.MsgNoSignal, to)
		return "", err
	})
}

// bridgeUDPRecvStart receives fd's datagrams as "udpmsg" events of
// handle h.
func bridgeUDPRecvStart(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.startDatagramReader(a.int(0), a.int(1))
}

// tlsRequest is what tls.js asks of StartTLS.
type tlsRequest struct {
	Server             bool     `json:"server"`
	ServerName         string   `json:"servername"`
	RejectUnauthorized bool     `json:"rejectUnauthorized"`
	CA                 []string `json:"ca"`
	Cert               string   `json:"cert"`
	Key                string   `json:"key"`
	ALPN               []string `json:"alpn"`
	RequestCert        bool     `json:"requestCert"`
}

// peerCert is a certificate as node's getPeerCertificate shows it.
type peerCert struct {
	Subject        map[string]string `json:"subject"`
	Issuer         map[string]string `json:"issuer"`
	SubjectAltName string            `json:"subjectaltname,omitempty"`
	ValidFrom      string            `json:"valid_from"`
	ValidTo        string            `json:"valid_to"`
	SerialNumber   string            `json:"serialNumber"`
	Fingerprint256 string            `json:"fingerprint256"`
	CA             bool              `json:"ca"`
	Raw            []byte            `json:"raw"` // base64 in JSON
}

// tlsReport is the session as tls.js receives it.
type tlsReport struct {
	kernel.TLSInfo
	PeerCerts []peerCert `json:"peerCertificates"`
}

func reportTLS(info kernel.TLSInfo) tlsReport {
	rep := tlsReport{TLSInfo: info}
	for _, der := range info.PeerCerts {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			continue
		}
		var alt []string
		for _, d := range c.DNSNames {
			alt = append(alt, "DNS:"+d)
		}
		for _, ip := range c.IPAddresses {
			alt = append(alt, "IP Address:"+ip.String())
		}
		sum := sha256.Sum256(der)
		fp := make([]string, len(sum))
		for i, b := range sum {
			fp[i] = fmt.Sprintf("%02X", b)
		}
		rep.PeerCerts = append(rep.PeerCerts, peerCert{
			Subject: pkixMap(c.Subject), Issuer: pkixMap(c.Issuer), SubjectAltName: strings.Join(alt, ", "),
			ValidFrom: c.NotBefore.UTC().Format("Jan _2 15:04:05 2006 GMT"), ValidTo: c.NotAfter.UTC().Format("Jan _2 15:04:05 2006 GMT"),
			SerialNumber: strings.ToUpper(c.SerialNumber.Text(16)), Fingerprint256: strings.Join(fp, ":"), CA: c.IsCA, Raw: der,
		})
	}
	return rep
}

// pkixMap is a name with node's keys (CN, O, OU, C, ST, L).
func pkixMap(n pkix.Name) map[string]string {
	m := map[string]string{}
	set := func(k string, v []string) {
		if len(v) > 0 {
			m[k] = strings.Join(v, "\n")
		}
	}
	if n.CommonName != "" {
		m["CN"] = n.CommonName
	}
	set("O", n.Organization)
	set("OU", n.OrganizationalUnit)
	set("C", n.Country)
	set("ST", n.Province)
	set("L", n.Locality)
	return m
}
