package js

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel/policy"
)

// A server and a client in one node process talk over the VM's own
// loopback: connect, data both ways, half-close, addresses.
func TestNetLoopbackEcho(t *testing.T) {
	v := newVM(t, nil)
	res := v.node(`
const net = require('net');
const srv = net.createServer((s) => {
  let got = '';
  s.on('data', (d) => { got += d; });
  s.on('end', () => { s.end('echo:' + got); });
});
srv.listen(0, '127.0.0.1', () => {
  const { port, address, family } = srv.address();
  const c = net.connect(port, '127.0.0.1', () => {
    console.log('connected', c.remoteAddress, c.remotePort === port, address, family);
    c.end('hello');
  });
  let back = '';
  c.on('data', (d) => { back += d; });
  c.on('close', () => { console.log(back); srv.close(() => console.log('closed')); });
});
`)
	want := "connected 127.0.0.1 true 127.0.0.1 IPv4\necho:hello\nclosed\n"
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want, res.stderr)
	}
}

// Names and refused connections come back as Node's errors.
func TestNetErrors(t *testing.T) {
	v := newVM(t, nil)
	res := v.node(`
const net = require('net');
net.connect(1, '127.0.0.1').on('error', (e) => {
  console.log(e.code, e.syscall, e.address, e.port, e.message);
  require('dns').lookup('localhost', (err, a, f) => console.log(err, a, f));
});
`)
	want := "ECONNREFUSED connect 127.0.0.1 1 connect ECONNREFUSED 127.0.0.1:1\nnull 127.0.0.1 4\n"
	if res.code != 0 || !strings.HasPrefix(res.stdout, want[:20]) || res.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want, res.stderr)
	}
}

// hostEcho is the outside world: a TCP server on the host's loopback that
// answers each connection with "host:" and what it read, then closes. It
// returns its port and a counter of the connections it accepted.
func hostEcho(t *testing.T) (port int, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer c.Close()
				b, _ := io.ReadAll(io.LimitReader(c, 1<<20))
				_, _ = c.Write(append([]byte("host:"), b...))
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, accepted
}

const connectScript = `
const net = require('net');
const tryConnect = (host, port) => new Promise((resolve) => {
  const c = net.connect(port, host);
  let got = '';
  c.on('connect', () => c.end('hi'));
  c.on('data', (d) => { got += d; });
  c.on('error', (e) => resolve(host + ' ' + e.code));
  c.on('close', (hadErr) => { if (!hadErr) resolve(host + ' ' + got); });
});
(async () => {
  for (const [h, p] of JSON.parse(process.argv[1])) console.log(await tryConnect(h, p));
})();
`

// The host network is reached only where a rule names it. A rule on the
// host's loopback port lets node reach the host server (by any spelling
// of the address); a "*" rule opens neither the host's loopback (which is
// the VM's own then), nor link-local (cloud metadata) or private ranges.
func TestNetHostPolicy(t *testing.T) {
	port, accepted := hostEcho(t)
	allowed := newConfiguredVM(t, engine(t), vm.Config{Policy: policy.AllowAll().AllowNet(fmt.Sprintf("127.0.0.1:%d", port))})
	res := allowed.node(connectScript, fmt.Sprintf(`[["127.0.0.1",%d],["2130706433",%d],["169.254.169.254",80],["10.0.0.1",80]]`, port, port))
	want := "127.0.0.1 host:hi\n2130706433 host:hi\n169.254.169.254 EACCES\n10.0.0.1 EACCES\n"
	if res.code != 0 || res.stdout != want {
		t.Fatalf("with a rule naming the host port:\nexit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want, res.stderr)
	}
	before := accepted.Load()
	denied := newConfiguredVM(t, engine(t), vm.Config{Policy: policy.AllowAll()})
	res = denied.node(connectScript, fmt.Sprintf(`[["127.0.0.1",%d],["2130706433",%d],["0x7f.1",%d],["::ffff:127.0.0.1",%d],["localhost",%d],["169.254.169.254",80],["192.168.1.1",80],["::",%d]]`,
		port, port, port, port, port, port))
	want = "127.0.0.1 ECONNREFUSED\n2130706433 ECONNREFUSED\n0x7f.1 ECONNREFUSED\n::ffff:127.0.0.1 ECONNREFUSED\n" +
		"localhost ECONNREFUSED\n169.254.169.254 EACCES\n192.168.1.1 EACCES\n:: ECONNREFUSED\n"
	if res.code != 0 || res.stdout != want {
		t.Fatalf("with only a \"*\" rule:\nexit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want, res.stderr)
	}
	if n := accepted.Load() - before; n != 0 {
		t.Fatalf("the host server accepted %d connections from a VM without a rule naming it", n)
	}
}

// dgram: datagrams between two sockets of the VM, with the sender's
// address, and to a host UDP echo a rule allows.
func TestDgram(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(append([]byte("host:"), buf[:n]...), from)
		}
	}()
	v := newConfiguredVM(t, engine(t), vm.Config{Policy: policy.AllowAll().AllowNet(pc.LocalAddr().String())})
	res := v.node(`
const dgram = require('dgram');
const [host, port] = process.argv[1].split(':');
const a = dgram.createSocket('udp4'), b = dgram.createSocket('udp4');
b.on('message', (msg, rinfo) => {
  console.log('b got', String(msg), rinfo.address, rinfo.port === a.address().port);
  b.close();
  a.send('ping', Number(port), host);
});
a.on('message', (msg, rinfo) => { console.log('a got', String(msg), rinfo.port === Number(port)); a.close(); });
b.bind(0, '127.0.0.1', () => a.bind(0, () => a.send(Buffer.from('hello'), b.address().port, '127.0.0.1')));
`, pc.LocalAddr().String())
	want := "b got hello 127.0.0.1 true\na got host:ping true\n"
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %s", res.code, res.stdout, want, res.stderr)
	}
}

// A guest that opens sockets without end gets EMFILE or ENFILE at the
// VM's limits, and once it closes them the VM's network works again;
// another VM never notices.
func TestNetSocketExhaustion(t *testing.T) {
	v := newVM(t, nil)
	other := newVM(t, nil)
	res := v.node(`
const net = require('net');
const srv = net.createServer((s) => s.end('hi')).listen(4000, '127.0.0.1', async () => {
  const socks = [];
  const codes = {};
  await Promise.all(Array.from({ length: 10000 }, () => new Promise((resolve) => {
    const s = net.connect(4000, '127.0.0.1');
    socks.push(s);
    s.on('connect', resolve);
    s.on('error', (e) => { codes[e.code] = (codes[e.code] || 0) + 1; resolve(); });
  })));
  const failed = Object.keys(codes).sort().join(',');
  for (const s of socks) s.destroy();
  setTimeout(() => {
    net.connect(4000, '127.0.0.1').on('data', (d) => { console.log(failed, String(d)); srv.close(); process.exit(0); });
  }, 50);
});
`)
	if res.code != 0 || (res.stdout != "ENFILE hi\n" && res.stdout != "EMFILE hi\n" && res.stdout != "EMFILE,ENFILE hi\n") {
		t.Fatalf("exit %d\nstdout %q\nstderr %s", res.code, res.stdout, trunc(res.stderr))
	}
	if r := other.node(`require('net').createServer().listen(4000, function () { console.log('ok'); this.close(); })`); r.code != 0 || r.stdout != "ok\n" {
		t.Fatalf("the other VM: %d %q %s", r.code, r.stdout, r.stderr)
	}
}
