package js

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A guest cannot use the REPL's ^C to outlive its CPU time limit: a
// child keeps sending SIGINT while the REPL runs busy loop after busy
// loop, and each SIGINT cancels only its own termination, never the
// limit's.
func TestREPLInterruptCannotCancelTheTimeLimit(t *testing.T) {
	e := newEngine(t, Config{TimeLimit: 500 * time.Millisecond})
	v := newVM(t, e)
	r := v.node(`
const { PassThrough } = require('stream');
const input = new PassThrough(), output = new PassThrough();
output.resume();
require('repl').start({ input, output, terminal: false });
const cp = require('child_process').spawn(process.execPath,
  ['-e', 'setInterval(() => { try { process.kill(' + process.pid + ', "SIGINT") } catch {} }, 1)'], { stdio: 'ignore' });
cp.on('spawn', () => input.write('while (true) {}\n'.repeat(100000)));
`)
	if r.code != 124 || !strings.Contains(r.stderr, "CPU time limit exceeded") {
		t.Fatalf("code %d, stderr %q", r.code, trunc(r.stderr))
	}
}

// SIGINT from another process stops each busy evaluation of a REPL on
// plain streams, and a pending top-level await, and the REPL goes on to
// the next entry. Each entry asks a child for one SIGINT, which can only
// come while that entry runs or waits: it never ends by itself.
func TestREPLInterruptBySignal(t *testing.T) {
	v := newVM(t, nil)
	r := v.node(`
const fs = require('fs');
const { PassThrough } = require('stream');
const input = new PassThrough(), output = new PassThrough();
output.pipe(process.stdout);
globalThis.ask = (n) => fs.writeFileSync('/tmp/sigint-' + n, '');
require('repl').start({ input, output, terminal: false, prompt: '' });
const sender = "const fs = require('fs'); let n = 1; const t = setInterval(() => { " +
  "if (!fs.existsSync('/tmp/sigint-' + n)) return; process.kill(" + process.pid + ", 'SIGINT'); if (++n > 3) clearInterval(t) }, 2)";
const cp = require('child_process').spawn(process.execPath, ['-e', sender], { stdio: 'ignore' });
cp.on('spawn', () => input.write('ask(1); while (true) {}\nask(2); while (true) {}\nask(3); await new Promise(() => {})\n6 * 7\nprocess.exit(7)\n'));
`)
	const stopped = "Uncaught Error: Script execution was interrupted by `SIGINT`\n"
	if r.code != 7 || r.stdout != stopped+stopped+stopped+"42\n" {
		t.Fatalf("code %d, stdout %q, stderr %q", r.code, r.stdout, trunc(r.stderr))
	}
}

// Entries of the REPL and what it prints for each, as node's REPL does:
// declarations persist from one entry to the next, with top-level await
// too, whatever strings, templates, comments and regular expressions
// the entry holds.
func TestREPLEntries(t *testing.T) {
	cases := []struct{ in, out string }{
		{`let x = 6`, `undefined`},
		{`x * 7`, `42`},
		{`const a = await Promise.resolve(1), b = 2; a + b`, `3`},
		{`a + b + x`, `9`},
		{`const { c, d: [e] } = await Promise.resolve({ c: 3, d: [4] }); c * e`, `12`},
		{"const t = `x${await Promise.resolve('y')}z`; t", `'xyz'`},
		{`class P { m() { return 'let const' } } const q = await new P().m(); q`, `'let const'`},
		{`new P().m()`, `'let const'`},
		{`async function g() { return 9 } await g()`, `9`},
		{`g.constructor.name`, `'AsyncFunction'`},
		{`/await/.test('await') && await Promise.resolve(true)`, `true`},
		{`for (const i of [1]) {} await 5 // const y = 1`, `5`},
		{`typeof i + typeof y`, `'undefinedundefined'`},
		{`await Promise.reject(new Error('no'))`, `Uncaught Error: no`},
		{`_error.message`, `'no'`},
		{`nope`, `Uncaught ReferenceError: nope is not defined`},
		{`{ a: 1 }`, `{ a: 1 }`},
		{`_`, `{ a: 1 }`},
		{`function f(n) {`, ``},
		{`  return n + 1`, ``},
		{`}`, `... ... undefined`}, // the continuation prompts come first
		{`f(1)`, `2`},
		{`require('path').join('a', 'b')`, `'a/b'`},
		{`path.sep + module.id`, `'/<repl>'`},
	}
	var in, want strings.Builder
	for _, c := range cases {
		in.WriteString(c.in + "\n")
		if c.out != "" {
			want.WriteString(c.out + "\n")
		}
	}
	v := newVM(t, nil)
	r := v.run(in.String(), "node", "-e", `
const { PassThrough } = require('stream');
const output = new PassThrough();
output.pipe(process.stdout);
require('repl').start({ input: process.stdin, output, terminal: false, prompt: '' });
`)
	if r.code != 0 || r.stdout != want.String() {
		t.Fatalf("code %d, stderr %q\n got:\n%s\nwant:\n%s", r.code, trunc(r.stderr), r.stdout, want.String())
	}
}

// node -i is the REPL on a pipe too; its output matches host node's on
// the same input (the oracle), greeting, prompts and all.
func TestREPLInteractiveFlagLikeHostNode(t *testing.T) {
	hostNode, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("host node is needed as the oracle:", err)
	}
	const in = "1+1\n[1, 'a', { b: null }]\nfunction f() {\nreturn 3 }\nf()\nnope\n_error.message\nlet s = 'x'; s.repeat(3)\n"
	cmd := exec.Command(hostNode, "-i")
	cmd.Stdin = strings.NewReader(in)
	cmd.Env = append(os.Environ(), "NODE_REPL_HISTORY=")
	want, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	version := regexp.MustCompile(`Node\.js v[0-9.]+`)
	v := newVM(t, nil)
	r := v.run(in, "node", "-i")
	if got, w := version.ReplaceAllString(r.stdout, "Node.js vX"), version.ReplaceAllString(string(want), "Node.js vX"); r.code != 0 || got != w {
		t.Fatalf("code %d, stderr %q\nVM:\n%q\nhost node:\n%q", r.code, trunc(r.stderr), got, w)
	}
}

// A signal a child sends its parent before it exits is delivered before
// the parent, whose loop the child's exit leaves idle, ends (libuv reads
// its signal pipe before it finds the loop idle). The watcher that hands
// signals to the loop raced the child's exit: the signal was lost and
// the parent exited 0 without running its handler.
func TestSignalFromExitingChildIsDelivered(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/parent.js", `
process.on('SIGUSR2', () => console.log('got'));
require('child_process').spawn(process.execPath, ['-e', 'process.kill(' + process.pid + ', "SIGUSR2")'], { stdio: 'ignore' });
`)
	r := v.node(`
const { spawnSync } = require('child_process');
let got = 0;
for (let i = 0; i < 30; i++) if (spawnSync(process.execPath, ['/workspace/parent.js'], { encoding: 'utf8' }).stdout === 'got\n') got++;
console.log(got);
`)
	if r.code != 0 || r.stdout != "30\n" {
		t.Fatalf("code %d, stdout %q, stderr %q", r.code, r.stdout, trunc(r.stderr))
	}
}
