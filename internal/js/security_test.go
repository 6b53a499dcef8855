package js

import (
	"os"
	"strings"
	"testing"
)

// Hostile scripts reach nothing of the host: not its global objects, env,
// files or processes, not the bridge, and cannot redirect the runtime by
// polluting built-in prototypes.
func TestSecurity(t *testing.T) {
	t.Setenv("SECEXEC_TEST_HOST_SECRET", "s3cr3t")
	host, _ := os.Hostname()
	v := newVM(t, nil)
	cases := []struct{ name, code, want string }{
		{"functionConstructor", `const g = ({}).constructor.constructor('return this')(); console.log(g === globalThis, typeof g.__secexec_bridge, typeof g.__secexec_start, Object.getOwnPropertyNames(g).filter(n => n.startsWith('__secexec')).length)`, "true undefined undefined 0\n"},
		{"noBridgeViaEval", `console.log(eval('typeof __secexec_bridge'), typeof globalThis.__secexec_dispatch)`, "undefined undefined\n"},
		{"hostEnv", `console.log(Object.keys(process.env).sort().join(','), JSON.stringify(process.env).includes('s3cr3t'))`, "HOME,PATH false\n"},
		{"hostFiles", `const fs = require('fs'); console.log(fs.readFileSync('/etc/hostname', 'utf8').trim(), fs.existsSync('/root/go'), fs.existsSync('/work'))`, "secexec false false\n"},
		{"hostProc", `const fs = require('fs'); const env = fs.readFileSync('/proc/self/environ', 'utf8'); console.log(env.includes('s3cr3t'), fs.readdirSync('/proc').filter(x => /^\d+$/.test(x)).length < 10)`, "false true\n"},
		{"hostname", `console.log(require('os').hostname() !== ` + "'" + host + "'" + `)`, "true\n"},
		{"binding", `for (const f of [() => process.binding('fs'), () => process._linkedBinding('x'), () => process.dlopen({}, '/x.node')]) { try { f(); console.log('no') } catch (e) { console.log(e.code) } }`, "ERR_ACCESS_DENIED\nERR_ACCESS_DENIED\nERR_DLOPEN_DISABLED\n"},
		{"addon", `require('fs').writeFileSync('/tmp/a.node', 'x'); try { require('/tmp/a.node') } catch (e) { console.log(e.code) }`, "ERR_DLOPEN_DISABLED\n"},
		{"noSAB", `console.log(typeof SharedArrayBuffer); try { new WebAssembly.Memory({initial: 1, maximum: 1, shared: true}); console.log('no') } catch (e) { console.log(e instanceof TypeError) }`, "undefined\ntrue\n"},
		{"scratchUnreachable", `const u = new Uint8Array(4); console.log(u.buffer.constructor === ArrayBuffer, Object.getPrototypeOf(u.buffer) === ArrayBuffer.prototype)`, "true true\n"},
		// Built-ins the runtime might use are replaced by spies that record
		// their receivers and arguments; none of those may be the bridge or
		// the scratch buffer.
		{"prototypePollution", `
const seen = []; const push = Array.prototype.push; const apply = Reflect.apply;
function spy(o, name) { const orig = o[name]; o[name] = function (...a) { apply(push, seen, [this, ...a]); return apply(orig, this, a) } }
for (const [o, names] of [[Array.prototype, ['push', 'shift', 'slice', 'join', 'map', 'forEach', 'splice']], [Function.prototype, ['call', 'apply', 'bind']],
  [Object.getPrototypeOf(Uint8Array.prototype), ['set', 'subarray', 'slice', 'fill']], [Map.prototype, ['get', 'set', 'has', 'delete']],
  [String.prototype, ['split', 'slice', 'startsWith', 'indexOf']], [JSON, ['parse', 'stringify']], [Promise.prototype, ['then']], [Object, ['defineProperty', 'keys', 'assign']]]) for (const n of names) spy(o, n);
const fs = require('fs'); fs.writeFileSync('/tmp/pp', Buffer.from('abc')); const back = fs.readFileSync('/tmp/pp', 'utf8');
require('crypto').createHash('sha1').update('x').digest('hex'); require('zlib').gzipSync('x'); new TextEncoder().encode('x'.repeat(1000));
setTimeout(() => {
  const bad = seen.filter(x => x && (typeof x === 'object' || typeof x === 'function') && (Object.prototype.toString.call(x) === '[object SharedArrayBuffer]' ||
    (ArrayBuffer.isView(x) && Object.prototype.toString.call(x.buffer) === '[object SharedArrayBuffer]') || 'setScratch' in x || 'compileModule' in x));
  process.stdout.write(back + ' ' + seen.length + ' ' + bad.length + '\n');
}, 1);`, "abc"},
		// A typed array made from another (subarray, slice) is built by the
		// receiver's constructor[Symbol.species]: the runtime must never
		// derive one from the scratch buffer, or the guest's species gets
		// the SharedArrayBuffer.
		{"speciesNoScratch", `let leaked = 0;
class Evil extends Uint8Array { constructor(...a) { super(...a); if (a[0] && Object.prototype.toString.call(a[0]) === '[object SharedArrayBuffer]') leaked++ } }
Object.defineProperty(Uint8Array, Symbol.species, { get() { return Evil }, configurable: true });
const fs = require('fs'); fs.writeFileSync('/tmp/sp', Buffer.alloc(300000, 1)); fs.readFileSync('/tmp/sp'); fs.readFileSync('/tmp/sp', 'utf8');
Object.defineProperty(Uint8Array, Symbol.species, { get() { return Uint8Array }, configurable: true });
Uint8Array.prototype.constructor = { [Symbol.species]: function (b, o, l) { if (Object.prototype.toString.call(b) === '[object SharedArrayBuffer]') leaked++; return new Uint8Array(b, o, l) } };
fs.readFileSync('/tmp/sp'); require('crypto').createHash('sha1').update('x').digest(); fs.writeSync(1, 'leaks ' + leaked + '\n')`, "leaks 0\n"},
		// fs's callback forms check their arguments by a dry run of the
		// synchronous form on a stand-in bridge; building that stand-in must
		// not pass the real bridge through a built-in the guest replaced.
		{"bridgeViaFsCheckArgs", `let got = 0; const keys = Object.keys, entries = Object.entries, own = Reflect.ownKeys;
const isB = (o) => o && typeof o === 'object' && ('setScratch' in o || 'blobRead' in o);
Object.keys = function (o) { if (isB(o)) got++; return keys(o) }; Object.entries = function (o) { if (isB(o)) got++; return entries(o) };
Reflect.ownKeys = function (o) { if (isB(o)) got++; return own(o) };
const fs = require('fs'); for (const f of ['stat', 'open', 'readdir', 'mkdir', 'readFile', 'writeFile', 'access', 'rm', 'chmod']) { try { fs[f]('/tmp') } catch {} }
console.log('bridge seen', got)`, "bridge seen 0\n"},
		{"overwriteGlobals", `const w = process.stdout.write.bind(process.stdout); globalThis.process = null; globalThis.Buffer = null; globalThis.require = null; w('still\n')`, "still\n"},
		{"clockCoarse", `let bad = 0; for (let i = 0; i < 2e4; i++) { if (Date.now() % 1 || performance.now() % 1 || process.hrtime()[1] % 1e6 || process.hrtime.bigint() % 1000000n) bad++ } const end = Date.now() + 30; while (Date.now() < end); console.log(bad)`, "0\n"},
		{"proxyNoLeak", `try { console.log(Reflect.ownKeys(ArrayBuffer).includes('prototype'), new ArrayBuffer(8).byteLength) } catch (e) { console.log(e) }`, "true 8\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := v.node(c.code)
			if c.name == "prototypePollution" {
				if f := strings.Fields(r.stdout); len(f) != 3 || f[0] != "abc" || f[2] != "0" || f[1] == "0" {
					t.Errorf("stdout %q (code %d) stderr %s", r.stdout, r.code, trunc(r.stderr))
				}
				return
			}
			if r.stdout != c.want {
				t.Errorf("stdout %q, want %q (code %d)\nstderr %s", r.stdout, c.want, r.code, trunc(r.stderr))
			}
			if strings.Contains(r.stdout+r.stderr, "s3cr3t") {
				t.Error("host environment leaked")
			}
		})
	}
}

// TestPrimordialsHoldUnderSpies replaces every method of every built-in a
// guest can reach with a spy (testdata/primordials_spy.js), then runs the
// runtime's modules through files, streams, sockets, http, child
// processes, crypto, zlib and timers: no spy may ever see the bridge or
// its scratch buffer. This is the check that the bootstrap uses its
// captured primordials wherever guest-replaceable built-ins would
// otherwise touch them.
func TestPrimordialsHoldUnderSpies(t *testing.T) {
	src, err := os.ReadFile("testdata/primordials_spy.js")
	if err != nil {
		t.Fatal(err)
	}
	v := newVM(t, nil)
	v.writeFile("/workspace/spy.js", string(src))
	r := v.run("", "node", "spy.js")
	f := strings.Fields(r.stdout)
	if r.code != 0 || len(f) != 3 || f[0] != "ok" || f[1] == "0" || f[2] == "0" {
		t.Fatalf("code %d stdout %q\nstderr %s", r.code, r.stdout, trunc(r.stderr))
	}
	t.Logf("%s methods spied, %s calls seen", f[1], f[2])
}
