package js

import (
	"context"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// panicWatch is a log handler that notes the bridge's recovered panics
// (js: bridge function panicked), which a guest never sees as more than
// EIO but which are bugs.
type panicWatch struct {
	slog.Handler
	panics atomic.Int64
	last   atomic.Value
}

func (p *panicWatch) Enabled(context.Context, slog.Level) bool { return true }

func (p *panicWatch) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "panicked") {
		p.panics.Add(1)
		r.Attrs(func(a slog.Attr) bool {
			p.last.Store(a.String())
			return true
		})
	}
	return nil
}

// bridgeFuzzScript decodes its argument (hex) into up to 16 bridge calls:
// a function (by index into the sorted names), up to 5 arguments, each a
// value of a hostile list, a number or a string taken from the input.
const bridgeFuzzScript = `
const B = globalThis.__test_bridge; const d = Buffer.from(process.argv[1] || '', 'hex'); let i = 0;
const next = () => i < d.length ? d[i++] : 0;
const skip = new Set(['exit', 'setScratch', 'read', 'readStart', 'readOnce', 'spawnSync', 'spawn', 'kill', 'sleep', 'accept', 'connect', 'lookup']);
const names = Object.getOwnPropertyNames(B).sort().filter(n => !skip.has(n));
const vals = [undefined, null, -1, 0, 1, 2, 3, 2**31, -(2**31), 2**53, 1e300, NaN, Infinity, 0.5, '', 'x', '/', '/tmp', '\u0000', '../../..',
  {}, [], () => 1, Symbol('s'), 10n, true, new Uint8Array(4), new ArrayBuffer(8), new Proxy({}, { get() { throw new Error('trap') } }),
  { valueOf() { throw new Error('v') }, toString() { throw new Error('s') } }, [1, [2, [3]]], new Date(0), /x/g, new Map([[1, 2]])];
for (let calls = 0; i < d.length && calls < 16; calls++) {
  const name = names[next() % names.length]; const n = next() % 6; const args = [];
  for (let j = 0; j < n; j++) {
    const k = next();
    if (k < 200) args.push(vals[k % vals.length]);
    else if (k < 228) args.push((next() | next() << 8 | next() << 16 | next() << 24) * (k & 1 ? 1 : 1 / 7));
    else { const len = next() % 32; args.push(d.subarray(i, i + len).toString('latin1')); i += len }
  }
  if (name === 'close' && args[0] >= 0 && args[0] <= 2) continue;
  try { B[name](...args) } catch (e) {}
}
console.log('done');`

// FuzzBridgeArgs calls bridge functions from a live isolate with
// arbitrary argument lists: each call returns or throws; none panics in
// Go, crashes the isolate, or hangs past the time limit.
func FuzzBridgeArgs(f *testing.F) {
	watch := &panicWatch{}
	e, err := NewEngine(context.Background(), Config{WarmIsolates: 2, TimeLimit: 2 * time.Second, Logger: slog.New(watch)})
	if err != nil {
		f.Fatal(err)
	}
	e.exposeBridge = true
	f.Cleanup(func() { e.Close() })
	v := newVM(f, e)
	for _, seed := range []string{"", "000100", "0105c8c9cacbcc", "ff05e4ffffffff7f0101", "10031f202122", "2a05e910414243444546474849"} {
		b, _ := hex.DecodeString(seed)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		before := watch.panics.Load()
		tv := *v // the VM, reporting to this input's t
		tv.t = t
		r := tv.node(bridgeFuzzScript, hex.EncodeToString(data))
		if r.code != 0 || !strings.HasSuffix(r.stdout, "done\n") {
			t.Fatalf("exit %d stdout %q stderr %s", r.code, r.stdout, trunc(r.stderr))
		}
		if watch.panics.Load() != before {
			t.Fatalf("a bridge function panicked: %v", watch.last.Load())
		}
	})
}
