package pysupport

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/netstack"
)

// netMsg builds a request as the Python side does.
func netMsg(op uint8, fd int32, a, b, c int64, addr string, data []byte) []byte {
	m := make([]byte, netHeader, netHeader+len(addr)+len(data))
	m[0] = op
	binary.LittleEndian.PutUint32(m[1:], uint32(fd))
	binary.LittleEndian.PutUint64(m[5:], uint64(a))
	binary.LittleEndian.PutUint64(m[13:], uint64(b))
	binary.LittleEndian.PutUint64(m[21:], uint64(c))
	binary.LittleEndian.PutUint16(m[29:], uint16(len(addr)))
	return append(append(m, addr...), data...)
}

func TestParseNetRequestRejectsHostileInput(t *testing.T) {
	long := strings.Repeat("a", maxAddrText+1)
	lying := netMsg(opConnect, 3, 0, 0, 0, "1.2.3.4:80", nil)
	binary.LittleEndian.PutUint16(lying[29:], 500) // longer than what follows
	cases := []struct {
		name string
		req  []byte
		want errno.Errno
	}{
		{"empty", nil, errno.EINVAL},
		{"short header", make([]byte, netHeader-1), errno.EINVAL},
		{"op zero", netMsg(0, 0, 0, 0, 0, "", nil), errno.EINVAL},
		{"unknown op", netMsg(200, 0, 0, 0, 0, "", nil), errno.EINVAL},
		{"address length beyond the message", lying, errno.EINVAL},
		{"address too long", netMsg(opConnect, 3, 0, 0, 0, long, nil), errno.EINVAL},
		{"NUL in address", netMsg(opConnect, 3, 0, 0, 0, "unix:/a\x00b", nil), errno.EINVAL},
		{"data on a request that takes none", netMsg(opConnect, 3, 0, 0, 0, "1.2.3.4:80", []byte("x")), errno.EINVAL},
		{"too large", netMsg(opSendTo, 3, 0, 0, 0, "", make([]byte, MaxNetRequest)), errno.E2BIG},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseNetRequest(tc.req); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	r, err := parseNetRequest(netMsg(opSendTo, 7, 0x40, -1, 5, "[::1]:53", []byte("payload")))
	if err != nil || r.op != opSendTo || r.fd != 7 || r.a != 0x40 || r.b != -1 || r.c != 5 || r.addr != "[::1]:53" || string(r.data) != "payload" {
		t.Fatalf("valid request: %+v, %v", r, err)
	}
}

func FuzzParseNetRequest(f *testing.F) {
	f.Add(netMsg(opSocket, -1, 2, 1, 0, "", nil))
	f.Add(netMsg(opConnect, 5, 0, 0, 0, "example.com:443", nil))
	f.Add(netMsg(opSendTo, 5, 0, 0, 0, "127.0.0.1:9", []byte("datagram")))
	f.Add(netMsg(opResolve, -1, 0, 0, 0, "localhost", nil))
	f.Add([]byte{opClose})
	f.Add(netMsg(opStartTLS, 5, tlsInsecure, 0, 0, "example.com", []byte(`{"ca":[],"alpn":["http/1.1"]}`)))
	f.Add(netMsg(opDup, 4, 0, 0, 0, "", nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseNetRequest(b)
		if err != nil {
			if !errors.Is(err, errno.EINVAL) && !errors.Is(err, errno.E2BIG) {
				t.Fatalf("error %v is neither EINVAL nor E2BIG", err)
			}
			return
		}
		if r.op < opSocket || r.op > opDup || len(r.addr) > maxAddrText || strings.IndexByte(r.addr, 0) >= 0 ||
			len(b) > MaxNetRequest || (len(r.data) > 0 && r.op != opSendTo && r.op != opStartTLS) ||
			(r.op == opSendTo && len(r.data) > netstack.MaxDatagram) {
			t.Fatalf("accepted an invalid request: %+v", r)
		}
		if r.op == opStartTLS {
			if req, err := parseTLSRequest(r.data, r.a); err != nil && !errors.Is(err, errno.EINVAL) {
				t.Fatalf("TLS request: %v", err)
			} else if err == nil && (len(req.CA) > maxTLSList || len(req.ALPN) > maxTLSList) {
				t.Fatalf("accepted TLS request %+v", req)
			}
		}
		// A response always encodes, whatever it carries.
		if out := (netResponse{err: errno.Errno(r.c & 0xff), text: r.addr, data: r.data}).encode(); len(out) < netRespHeader {
			t.Fatal("short response")
		}
	})
}

// An address resolved from a name travels as "name|address".
func TestParseAddrPinned(t *testing.T) {
	a, err := parseAddr("example.com|93.184.216.34:443")
	if err != nil || a.Name != "example.com" || a.IP.String() != "93.184.216.34:443" {
		t.Fatalf("%+v, %v", a, err)
	}
	if a, err := parseAddr("[::1]:80"); err != nil || a.Name != "" || a.IP.Port() != 80 {
		t.Fatalf("plain: %+v, %v", a, err)
	}
	for _, bad := range []string{"|1.2.3.4:80", "a|unix:/x", "a|b.example:80", "a|1.2.3.4", "a|"} {
		if _, err := parseAddr(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
