package js

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkBridgeCalls measures the bridge's hot paths from JavaScript:
// each iteration is one call (or one 64 KiB chunk), timed by the script
// itself so that the VM's start is not counted. It reports ns per call
// (or MB/s of a stream) as metrics; the Go time per op includes the
// start and is not the number to compare.
func BenchmarkBridgeCalls(b *testing.B) {
	cases := []struct{ name, script string }{
		// fs.writeSync and fs.readSync of 64 bytes at a position: the
		// writeScratch and read bridge functions, one call each.
		{"pwrite+pread", `
const fs = require('fs'); const n = +process.argv[1];
const fd = fs.openSync('/tmp/bench', 'w+'); const buf = Buffer.alloc(64, 1);
const t0 = performance.now();
for (let i = 0; i < n; i++) { fs.writeSync(fd, buf, 0, 64, 0); fs.readSync(fd, buf, 0, 64, 0); }
console.log((performance.now() - t0) * 1e6 / n / 2);`},
		// fs.fstatSync: a call with one int argument and a scratch result.
		{"fstat", `
const fs = require('fs'); const n = +process.argv[1]; const fd = fs.openSync('/tmp/bench2', 'w+');
const t0 = performance.now();
for (let i = 0; i < n; i++) fs.fstatSync(fd);
console.log((performance.now() - t0) * 1e6 / n);`},
		// A pipe read by readStart: a child writes n chunks of 64 KiB
		// through a pipe the parent's stream reads.
		{"readStart-pipe", `
const { spawn } = require('child_process'); const n = +process.argv[1];
const t0 = performance.now(); let got = 0;
const c = spawn(process.execPath, ['-e', 'const b = Buffer.alloc(65536, 97); const n = +process.argv[1]; let i = 0; (function w() { while (i < n) { i++; if (!process.stdout.write(b)) return process.stdout.once("drain", w); } })()', String(n)]);
c.stdout.on('data', (d) => { got += d.length; });
c.on('close', () => { if (got !== n * 65536) throw new Error('got ' + got); console.log((performance.now() - t0) * 1e6 / n); });`},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			v := newVM(b, nil)
			r := v.node(c.script, strconv.Itoa(b.N))
			if r.code != 0 {
				b.Fatalf("exit %d: %s", r.code, trunc(r.stderr))
			}
			ns, err := strconv.ParseFloat(strings.TrimSpace(r.stdout), 64)
			if err != nil {
				b.Fatalf("stdout %q: %v", r.stdout, err)
			}
			b.ReportMetric(ns, "ns/call")
		})
	}
}

// BenchmarkBridgeDispatch measures bridge calls from inside the VM through
// the public APIs that make them (b.N rounds of 10000 calls each) and
// reports the time of one: util.types.isMap (isType: the dispatcher's
// cost with almost no body), a message posted on a MessageChannel and
// taken back with receiveMessageOnPort (portPost, which consumes bytes,
// and portRecv), and a socket's address (netName).
func BenchmarkBridgeDispatch(b *testing.B) {
	v := newVM(b, nil)
	r := v.node(`
const { types } = require('util');
const { MessageChannel, receiveMessageOnPort } = require('worker_threads');
const net = require('net');
const runs = +process.argv[1], per = 10000;
const perCall = {};
const time = (name, f) => {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) for (let j = 0; j < per; j++) f();
  perCall[name] = Number(process.hrtime.bigint() - t0) / (runs * per);
};
const m = new Map();
let hits = 0;
time('isType', () => { if (types.isMap(m)) hits++; });
const { port1, port2 } = new MessageChannel();
const msg = 'x'.repeat(64);
time('portPostRecv', () => { port1.postMessage(msg); if (receiveMessageOnPort(port2).message === msg) hits++; });
port1.close();
const server = net.createServer().listen(0, '127.0.0.1', () => {
  time('netName', () => { if (server.address().port > 0) hits++; });
  server.close();
  if (hits !== 3 * runs * per) throw new Error('hits ' + hits);
  console.log(JSON.stringify(perCall));
});
`, strconv.Itoa(b.N))
	var perCall map[string]float64
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &perCall) != nil || len(perCall) != 3 {
		b.Fatalf("exit %d stdout %q stderr %s", r.code, r.stdout, trunc(r.stderr))
	}
	for name, ns := range perCall {
		b.ReportMetric(ns, name+"-ns/call")
	}
}
