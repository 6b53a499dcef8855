package js

import (
	"strconv"
	"strings"
	"testing"
)

func TestNodeFileAndModules(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/lib.js", "exports.add = (a, b) => a + b; exports.name = __filename;")
	v.writeFile("/workspace/data.json", `{"k": [1, 2]}`)
	v.writeFile("/workspace/main.js", `#!/usr/bin/env node
const lib = require('./lib');
const data = require('./data.json');
console.log(lib.add(2, 3), lib.name, data.k.length, require.main === module, process.argv.slice(2));
`)
	r := v.run("", "node", "main.js", "a", "b")
	if want := "5 /workspace/lib.js 2 true [ 'a', 'b' ]\n"; r.stdout != want || r.code != 0 {
		t.Fatalf("stdout %q stderr %s", r.stdout, r.stderr)
	}

	// node_modules with "exports" conditions, a scoped package, ESM.
	for _, d := range []string{"/workspace/node_modules", "/workspace/node_modules/dual", "/workspace/node_modules/dual/dist",
		"/workspace/node_modules/@s", "/workspace/node_modules/@s/p", "/workspace/esm"} {
		mkdir(t, v, d)
	}
	v.writeFile("/workspace/node_modules/dual/package.json", `{"name":"dual","exports":{".":{"import":"./dist/m.mjs","require":"./dist/c.cjs"},"./sub/*":"./dist/*.cjs"}}`)
	v.writeFile("/workspace/node_modules/dual/dist/c.cjs", `module.exports = 'cjs'`)
	v.writeFile("/workspace/node_modules/dual/dist/m.mjs", `export default 'esm'`)
	v.writeFile("/workspace/node_modules/dual/dist/x.cjs", `module.exports = 'sub-x'`)
	v.writeFile("/workspace/node_modules/@s/p/package.json", `{"main":"lib.js"}`)
	v.writeFile("/workspace/node_modules/@s/p/lib.js", `module.exports = 'scoped'`)
	v.writeFile("/workspace/esm/package.json", `{"type":"module"}`)
	v.writeFile("/workspace/esm/a.js", `import d from 'dual'; import {x} from './b.js'; import fs from 'node:fs'; export const y = x + 1; console.log(d, x, typeof fs.readFileSync, import.meta.url);`)
	v.writeFile("/workspace/esm/b.js", `export const x = 41;`)
	v.writeFile("/workspace/c.js", `console.log(require('dual'), require('dual/sub/x'), require('@s/p'), require('./esm/a.js').y)`)
	r = v.run("", "node", "c.js")
	if want := "cjs sub-x scoped\nesm 41 function file:///workspace/esm/a.js\n42\n"; r.stdout != want {
		// order: requiring a.js prints before the outer console.log completes
		t.Logf("stdout %q", r.stdout)
	}
	if !strings.Contains(r.stdout, "esm 41 function file:///workspace/esm/a.js") || !strings.Contains(r.stdout, "cjs sub-x scoped 42") {
		t.Fatalf("stdout %q stderr %s", r.stdout, r.stderr)
	}

	// TypeScript.
	v.writeFile("/workspace/t.ts", "interface P { x: number }\nconst p: P = { x: 7 };\nconsole.log(p.x as number);\n")
	r = v.run("", "node", "t.ts")
	if r.stdout != "7\n" {
		t.Fatalf("ts: stdout %q stderr %s", r.stdout, r.stderr)
	}
	// .mjs entry with dynamic import and detect-module for .js.
	v.writeFile("/workspace/m.mjs", "const m = await import('./lib.js'); console.log(m.add(1, 1));")
	r = v.run("", "node", "m.mjs")
	t.Logf("tla: %q %s", r.stdout, r.stderr)
	v.writeFile("/workspace/detect.js", "import path from 'path'; console.log(path.sep)")
	r = v.run("", "node", "detect.js")
	if r.stdout != "/\n" {
		t.Fatalf("detect: stdout %q stderr %s", r.stdout, r.stderr)
	}

	// Errors.
	r = v.node("require('nope')")
	if r.code != 1 || !strings.Contains(r.stderr, "Cannot find module 'nope'") || !strings.Contains(r.stderr, "code: 'MODULE_NOT_FOUND'") {
		t.Fatalf("not found: %s", r.stderr)
	}
	v.writeFile("/workspace/bad.js", "let x = ;\n")
	r = v.run("", "node", "bad.js")
	if r.code != 1 || !strings.Contains(r.stderr, "SyntaxError") || !strings.Contains(r.stderr, "/workspace/bad.js:1") {
		t.Fatalf("syntax: %s", r.stderr)
	}
	r = v.run("", "node", "missing.js")
	if r.code != 1 || !strings.Contains(r.stderr, "Cannot find module '/workspace/missing.js'") {
		t.Fatalf("missing main: %s", r.stderr)
	}
}

func TestNodeStdinScript(t *testing.T) {
	v := newVM(t, nil)
	r := v.run("console.log('from stdin', 6*7)", "node")
	if r.stdout != "from stdin 42\n" {
		t.Fatalf("stdout %q stderr %s", r.stdout, r.stderr)
	}
	r = v.run("line1\nline2\n", "node", "-e", `let s=''; process.stdin.on('data', d => s += d); process.stdin.on('end', () => console.log(JSON.stringify(s)))`)
	if r.stdout != "\"line1\\nline2\\n\"\n" {
		t.Fatalf("stdin stream: stdout %q stderr %s", r.stdout, r.stderr)
	}
	r = v.run("abc", "node", "-e", `console.log(require('fs').readFileSync(0, 'utf8'))`)
	if r.stdout != "abc\n" {
		t.Fatalf("readFileSync(0): stdout %q stderr %s", r.stdout, r.stderr)
	}
	// pipe() pauses stdin when the destination is full and reads again
	// when it drains: a paused stdin lets the process exit, one that
	// flows again keeps it running to the end.
	big := strings.Repeat("0123456789abcdef", 1<<16)
	r = v.run(big, "node", "-e", `const fs = require('fs'); process.stdin.pipe(fs.createWriteStream('/tmp/copy')).on('finish', () => console.log(fs.statSync('/tmp/copy').size))`)
	if r.stdout != strconv.Itoa(len(big))+"\n" {
		t.Fatalf("stdin piped to a file: stdout %q stderr %s", r.stdout, r.stderr)
	}
}

func TestNodeChildProcess(t *testing.T) {
	v := newVM(t, nil)
	r := v.node(`const cp = require('child_process');
const out = cp.execFileSync('node', ['-e', 'console.log(process.argv[1]); process.stderr.write("E")', 'arg']);
console.log(JSON.stringify(out.toString()));
const r = cp.spawnSync('node', ['-e', 'process.exit(3)']);
console.log(r.status, r.signal);
try { cp.execFileSync('node', ['-e', 'process.exit(2)'], {stdio: 'pipe'}) } catch (e) { console.log('status', e.status) }
const c = cp.spawn('node', ['-e', 'process.stdin.pipe(process.stdout)']);
let got = '';
c.stdout.on('data', d => got += d);
c.on('close', (code) => console.log('async', code, JSON.stringify(got)));
c.stdin.end('ping');
cp.execFile('node', ['-p', '6*7'], (err, so) => console.log('exec', err, so.trim()));
`)
	if r.code != 0 {
		t.Fatalf("code %d stderr %s", r.code, r.stderr)
	}
	for _, want := range []string{"\"arg\\n\"", "3 null", "status 2", "async 0 \"ping\"", "exec null 42"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("missing %q in %q (stderr %s)", want, r.stdout, r.stderr)
		}
	}
	if r.stderr != "E" {
		t.Errorf("stderr %q", r.stderr)
	}
	r = v.node(`require('child_process').spawn('nope').on('error', e => console.log(e.code, e.message))`)
	if r.stdout != "ENOENT spawn nope ENOENT\n" {
		t.Errorf("spawn error: %q %s", r.stdout, r.stderr)
	}
}
