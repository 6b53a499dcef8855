package js

import (
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
