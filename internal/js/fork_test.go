package js

import (
	"context"
	"testing"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// TestForkPingPong: parent and child exchange messages over the channel;
// the child stays alive while it listens, and exits once the parent
// disconnects; the parent sees 'disconnect', 'exit' and 'close'.
func TestForkPingPong(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/child.js", `
process.on('message', (m) => process.send({ n: m.n + 1, pid: process.pid > 0 }));
process.on('disconnect', () => console.log('child disconnected'));
`)
	r := v.node(`
const { fork } = require('child_process');
const c = fork('child.js');
const seen = [];
c.on('message', (m) => {
  seen.push(m.n);
  if (m.n < 100) c.send({ n: m.n + 1 });
  else c.disconnect();
});
c.on('disconnect', () => seen.push('disconnect'));
c.on('exit', (code, sig) => { console.log(seen.length, seen.slice(0, 3).join(','), seen.slice(-2).join(','), code, sig); });
c.send({ n: 0 });
`)
	// The child inherited stdout: its last words come before its exit.
	expectRun(t, r, "child disconnected\n52 1,3,5 101,disconnect 0 null\n")
}

// TestForkModules: fork runs .js, .mjs, .cjs and .ts children, with
// arguments and execArgv, and silent:true pipes their output.
func TestForkModules(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/a.js", `process.send(['js', ...process.argv.slice(2)]); console.log('out of a')`)
	v.writeFile("/workspace/b.mjs", `import path from 'node:path'; process.send(['mjs', path.basename(import.meta.url)]);`)
	v.writeFile("/workspace/c.ts", `const n: number = 41; interface X { y: string }; process.send(['ts', n + 1]);`)
	v.writeFile("/workspace/d.cjs", `process.send(['cjs', process.execArgv.join(' ')]); console.error('err of d')`)
	r := v.node(`
const { fork } = require('child_process');
const runs = [
  ['a.js', ['x', 'y'], { silent: true }],
  ['b.mjs', [], {}],
  ['c.ts', [], {}],
  ['d.cjs', [], { silent: true, execArgv: ['--no-warnings'] }],
];
(async () => {
  for (const [file, args, opts] of runs) {
    const c = fork(file, args, opts);
    let out = '';
    if (c.stdout) c.stdout.on('data', (d) => out += d);
    if (c.stderr) c.stderr.on('data', (d) => out += d);
    const msg = await new Promise((res) => c.once('message', res));
    const code = await new Promise((res) => c.once('close', res));
    console.log(JSON.stringify(msg), code, JSON.stringify(out));
  }
})();
`)
	expectRun(t, r, `["js","x","y"] 0 "out of a\n"
["mjs","b.mjs"] 0 ""
["ts",42] 0 ""
["cjs","--no-warnings"] 0 "err of d\n"
`)
}

// TestForkLifetimes: a child that does not listen exits by itself; an
// unreferenced channel and child let the parent exit first; a child that
// exits closes the channel before its exit is reported.
func TestForkLifetimes(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/quiet.js", `process.send('hello')`)
	v.writeFile("/workspace/forever.js", `process.on('message', () => {})`)
	r := v.node(`
const { fork } = require('child_process');
const q = fork('quiet.js');
const order = [];
q.on('message', (m) => order.push(m));
q.on('disconnect', () => order.push('disconnect'));
q.on('exit', () => order.push('exit'));
q.on('close', () => {
  order.push('close');
  console.log(order.join(' '));
  const f = fork('forever.js');
  f.channel.unref();
  f.unref();
  console.log('parent done', f.connected);
});
`)
	expectRun(t, r, "hello disconnect exit close\nparent done true\n")
}

// TestForkErrors: errors of send and disconnect, and of spawning.
func TestForkErrors(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/c.js", `process.on('message', () => {})`)
	r := v.node(`
const { fork } = require('child_process');
const c = fork('c.js');
try { c.send(Symbol('x')) } catch (e) { console.log(e.code) }
try { c.send('x', { fake: 'handle' }) } catch (e) { console.log(e.code) }
const missing = fork('/nope/missing.js', { silent: true });
let err = '';
missing.stderr.on('data', (d) => err += d);
missing.on('exit', (code) => {
  console.log('missing exit', code, err.includes('Cannot find module'));
  c.kill();
});
c.on('exit', (code, sig) => console.log('killed', code, sig, c.connected));
`)
	expectRun(t, r, "ERR_INVALID_ARG_TYPE\nERR_ACCESS_DENIED\nmissing exit 1 true\nkilled null SIGTERM false\n")
}

// TestForkExtraStdio: a 'pipe' beyond stdio is a duplex channel; other
// entries pass descriptors through.
func TestForkExtraStdio(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/fd3.js", `
const fs = require('fs');
fs.writeSync(3, 'to parent');
const b = Buffer.alloc(64);
const n = fs.readSync(3, b);
fs.writeSync(1, 'child read ' + b.subarray(0, n) + '\n');
`)
	r := v.node(`
const { spawn } = require('child_process');
const c = spawn(process.execPath, ['fd3.js'], { stdio: ['ignore', 'inherit', 'inherit', 'pipe'] });
c.stdio[3].once('data', (d) => { console.log('parent read', String(d)); c.stdio[3].write('to child'); });
c.on('close', (code) => console.log('close', code));
`)
	expectRun(t, r, "parent read to parent\nchild read to child\nclose 0\n")
}

// TestForkMessageBounds: messages over 64 MiB are refused on sending, and
// a peer that writes a longer line is cut off.
func TestForkMessageBounds(t *testing.T) {
	e := engine(t)
	m, err := vm.New(context.Background(), vm.Config{
		Policy: policy.AllowAll(),
		Lowers: []vfs.FileSystem{e.Layer()},
		// A larger heap for the 64 MiB strings of this test.
		Limits: kernel.Limits{MemoryBytes: 1 << 30},
	})
	if err != nil {
		t.Fatal(err)
	}
	m.Kernel.RegisterLoader(e.Loader())
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	v := &testVM{t: t, vm: m, e: e}
	v.writeFile("/workspace/flood.js", `
const fs = require('fs');
const chunk = Buffer.alloc(1 << 20, 'x');
for (let i = 0; i < 200; i++) fs.writeSync(3, chunk);
`)
	r := v.node(`
const { fork } = require('child_process');
const c = fork('flood.js', { silent: true });
c.send('x'.repeat(64 * 1024 * 1024 + 1), (err) => console.log('send', err.code, err instanceof RangeError));
c.on('error', (err) => console.log('error', err.code));
c.on('disconnect', () => console.log('disconnect'));
// The flooding child's writes then fail (EPIPE, or SIGPIPE).
c.on('close', (code, sig) => console.log('close', code !== 0 || sig !== null));
`)
	expectRun(t, r, "send ERR_IPC_MESSAGE_TOO_LARGE true\nerror ERR_IPC_MESSAGE_TOO_LARGE\ndisconnect\nclose true\n")
}
