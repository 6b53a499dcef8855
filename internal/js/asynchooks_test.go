package js

import (
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel"
)

// A guest's promise hook runs JavaScript inside V8's promise machinery:
// a hook that spins is still stopped by the CPU limit (the termination
// leaves the hook and the promise operation), one that throws reaches
// 'uncaughtException' without ending the operation, and a hook that
// makes promises itself does not call itself again without end.
func TestPromiseHookGuestAttacks(t *testing.T) {
	e := newEngine(t, Config{})
	m := stressVM(t, e, kernel.Limits{CPUTime: 300 * time.Millisecond})
	st, _, errOut, err := spawnNode(m.Kernel, `require('v8').promiseHooks.onInit(() => { for (;;) {} }); Promise.resolve(); console.log('not reached')`, false)
	if err != nil || st.Signal != kernel.SIGXCPU {
		t.Fatalf("spinning hook: %+v %q %v", st, errOut, err)
	}
	st, out, errOut, err := spawnNode(m.Kernel, `
		const { promiseHooks } = require('v8');
		let n = 0;
		process.on('uncaughtException', (e) => console.log('caught', e.message));
		const stop = promiseHooks.onInit(() => { n++; Promise.resolve().then(() => {}); throw new Error('from hook'); });
		const p = Promise.resolve(7);
		stop();
		p.then((v) => console.log('value', v, 'inits', n));`, false)
	if err != nil || !st.Exited || st.Code != 0 || out != "caught from hook\nvalue 7 inits 1\n" {
		t.Fatalf("throwing hook: %+v %q %q %v", st, out, errOut, err)
	}
}

// AsyncLocalStorage's frames and the hooks' id stack stay bounded: a
// guest that enters many stores, nests runs deeply or makes many
// storages keeps one frame node per storage, and a deep recursion of
// runInAsyncScope ends with a RangeError, not an engine failure.
func TestAsyncContextBounded(t *testing.T) {
	v := newVM(t, nil)
	r := v.run("", "node", "-e", `
		const { AsyncLocalStorage, AsyncResource, createHook, executionAsyncId } = require('async_hooks');
		const a = new AsyncLocalStorage(), b = new AsyncLocalStorage();
		for (let i = 0; i < 200000; i++) { a.enterWith(i); b.enterWith(-i); }
		console.log(a.getStore(), b.getStore());
		const r = new AsyncResource('deep');
		let depth = 0;
		function dive() { depth++; r.runInAsyncScope(dive); }
		createHook({ before() {} }).enable();
		try { dive(); } catch (e) { console.log(e instanceof RangeError, depth > 100, executionAsyncId()); }
		setTimeout(() => console.log('timer', a.getStore(), executionAsyncId() > 1), 1);`)
	want := "199999 -199999\ntrue true 1\ntimer 199999 true\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d, stdout %q (want %q)\n%s", r.code, r.stdout, want, trunc(r.stderr))
	}
	if strings.Contains(r.stderr, "Fatal") {
		t.Fatalf("engine failure: %s", r.stderr)
	}
}

// A hook that throws ends the process as in Node: the thrown value on
// stderr as an Error line, exit code 1, and no 'uncaughtException'
// listener hears it (Node's fatalError for async hooks).
func TestAsyncHookThrowIsFatal(t *testing.T) {
	v := newVM(t, nil)
	for _, c := range []struct{ hook, value, want string }{
		{"init", "null", "Error: null"},
		{"before", "Symbol('foo')", "Error: Symbol(foo)"},
		{"promiseResolve", "new TypeError('bad hook')", "TypeError: bad hook"},
	} {
		r := v.run("", "node", "-e", `
			process.on('uncaughtException', () => console.log('listener ran'));
			require('async_hooks').createHook({ `+c.hook+`() { throw `+c.value+`; } }).enable();
			new Promise((resolve) => resolve()).then(() => setTimeout(() => console.log('not reached'), 1));`)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if r.code != 1 || r.stdout != "" || first != c.want {
			t.Errorf("%s throwing %s: exit %d, stdout %q, stderr %q (want exit 1 and %q)", c.hook, c.value, r.code, r.stdout, trunc(r.stderr), c.want)
		}
	}
}

// Hooks run with their AsyncHook as this (test/common's onGC keeps its
// state there), and an AsyncResource nobody destroys by hand is
// destroyed when it is collected — once, and never one that asked for
// manual destroy. Host node gives the same lines.
func TestAsyncResourceDestroyedOnGC(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/gcd.js", `
const ah = require('async_hooks');
const events = [];
const hook = ah.createHook({
  init(id, type) { if (type.startsWith('T')) { this.ids = this.ids || {}; this.ids[id] = type; } },
  destroy(id) { if (this.ids && this.ids[id]) events.push(this.ids[id] + (this === hook ? ' this=hook' : ' this=?')); },
}).enable();
(function () {
  new ah.AsyncResource('T-collected');
  new ah.AsyncResource('T-manual', { requireManualDestroy: true });
  new ah.AsyncResource('T-emitted').emitDestroy();
})();
(async () => {
  for (let i = 0; i < 10; i++) { await new Promise((r) => setImmediate(r)); globalThis.gc(); }
  await new Promise((r) => setImmediate(r));
  console.log(events.sort().join('\n'));
  hook.disable();
})();
`)
	r := v.run("", "node", "--expose-gc", "gcd.js")
	if want := "T-collected this=hook\nT-emitted this=hook\n"; r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d, stdout %q, want %q, stderr %q", r.code, r.stdout, want, trunc(r.stderr))
	}
}

// EventSource is a global only under --experimental-eventsource, as in
// Node 22, and is undici's: it reads a server-sent event stream from a
// server in the VM.
func TestEventSourceBehindFlag(t *testing.T) {
	v := newVM(t, nil)
	r := v.run("", "node", "-e", `console.log(typeof EventSource)`)
	if r.code != 0 || r.stdout != "undefined\n" {
		t.Fatalf("without the flag: exit %d %q %q", r.code, r.stdout, trunc(r.stderr))
	}
	r = v.run("", "node", "--experimental-eventsource", "-e", `
const http = require('http');
const srv = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write('data: one\n\n');
  res.end('event: last\ndata: two\n\n');
}).listen(0, () => {
  const es = new EventSource('http://127.0.0.1:' + srv.address().port + '/');
  es.onmessage = (e) => console.log('message', e.data);
  es.addEventListener('last', (e) => { console.log('last', e.data); es.close(); srv.close(); });
});
`)
	if r.code != 0 || r.stdout != "message one\nlast two\n" {
		t.Fatalf("with the flag: exit %d %q %q", r.code, r.stdout, trunc(r.stderr))
	}
}
