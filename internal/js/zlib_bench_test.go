package js

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkZlibSync measures the one-shot deflate and inflate of 4 MiB of
// source-like text inside the VM (b.N runs of each) and reports MiB/s.
func BenchmarkZlibSync(b *testing.B) {
	v := newVM(b, nil)
	r := v.node(`
const zlib = require('zlib');
const parts = []; let n = 0;
while (n < 4 << 20) { const s = 'function f' + n + '(a, b) { return a * ' + (n % 977) + ' + b - ' + ((n * 31) % 1013) + '; }\n'; parts.push(s); n += s.length; }
const input = Buffer.from(parts.join(''));
const packed = zlib.deflateSync(input);
const runs = +process.argv[1];
for (const [name, f] of [['deflate6', () => zlib.deflateSync(input)], ['deflate1', () => zlib.deflateSync(input, { level: 1 })], ['inflate', () => zlib.inflateSync(packed)]]) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) f();
  console.log(name, (input.length * runs / (Number(process.hrtime.bigint() - t0) / 1e9) / 1048576).toFixed(1));
}
`, strconv.Itoa(b.N))
	if r.code != 0 {
		b.Fatalf("exit %d: %s", r.code, trunc(r.stderr))
	}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			b.Fatalf("output %q", r.stdout)
		}
		mib, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(mib, f[0]+"-MiB/s")
	}
}
