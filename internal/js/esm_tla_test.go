package js

import (
	"strings"
	"testing"
)

// Top-level await in the entry module and in modules it imports: modules
// evaluate depth-first, post-order; an importer waits for an import that
// awaits, a sibling that does not depend on it does not; import() settles
// after the imported module's evaluation. The expected output is Node's
// (the differential probe testdata/diff/esm_tla.js checks the same graphs
// against the host's node).
func TestESMTopLevelAwait(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/main.mjs", `import './x.cjs';
import { t1 } from './t1.mjs';
import './y.mjs';
import './t2.mjs';
console.log('main', t1);
const m = await import('./t1.mjs');
console.log('dyn', m.t1, m === await import('./t1.mjs'));
for await (const x of [Promise.resolve(1), 2]) console.log('for await', x);
setTimeout(() => console.log('timer'), 1);
`)
	v.writeFile("/workspace/x.cjs", `console.log('x cjs');`)
	v.writeFile("/workspace/t1.mjs", `import './t1dep.mjs';
console.log('t1 start');
await null;
console.log('t1 mid');
await new Promise((r) => setTimeout(r, 5));
console.log('t1 end');
export const t1 = 'T1';
`)
	v.writeFile("/workspace/t1dep.mjs", `console.log('t1dep');`)
	v.writeFile("/workspace/y.mjs", `import { t1 } from './t1.mjs';
console.log('y after t1', t1);`)
	v.writeFile("/workspace/t2.mjs", `console.log('t2 start');
await 0;
console.log('t2 end');`)
	r := v.run("", "node", "main.mjs")
	want := "x cjs\nt1dep\nt1 start\nt2 start\nt1 mid\nt2 end\nt1 end\ny after t1 T1\nmain T1\ndyn T1 true\nfor await 1\nfor await 2\ntimer\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("code %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}

	// The same graph through import() from CommonJS, and in evaluated
	// module code.
	v.writeFile("/workspace/dyn.cjs", `import('./main.mjs').then((ns) => console.log('imported', Object.keys(ns).length));`)
	r = v.run("", "node", "dyn.cjs")
	if r.code != 0 || r.stdout != strings.Replace(want, "timer\n", "imported 0\ntimer\n", 1) {
		t.Fatalf("import() from CommonJS: code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = v.run("", "node", "--input-type=module", "-e", `const { t1 } = await import('./t1.mjs'); console.log(await Promise.resolve(t1), import.meta.url)`)
	if r.code != 0 || !strings.HasSuffix(r.stdout, "t1 end\nT1 file:///workspace/[eval1]\n") {
		t.Fatalf("eval: code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = v.run("console.log(await Promise.resolve('stdin'))", "node", "--input-type=module")
	if r.code != 0 || r.stdout != "stdin\n" {
		t.Fatalf("stdin: code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// TypeScript modules await too.
	v.writeFile("/workspace/t.mts", "interface R { n: number }\nconst r: R = { n: await Promise.resolve(7) };\nconsole.log(r.n satisfies number);\n")
	r = v.run("", "node", "t.mts")
	if r.code != 0 || r.stdout != "7\n" {
		t.Fatalf("mts: code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// A rejected top-level await is an uncaught exception: exit 1, Node's
// report (source line, caret, stack) on stderr; one never settled ends the
// process with 13 and a warning.
func TestESMTopLevelAwaitFailures(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/main.mjs", "import './bad.mjs';\nconsole.log('never');\n")
	v.writeFile("/workspace/bad.mjs", "console.log('bad start');\nawait 1;\nthrow new TypeError('bad dep');\n")
	r := v.run("", "node", "main.mjs")
	wantErr := "file:///workspace/bad.mjs:3\nthrow new TypeError('bad dep');\n      ^\n\nTypeError: bad dep\n    at file:///workspace/bad.mjs:3:7\n"
	if r.code != 1 || r.stdout != "bad start\n" || !strings.HasPrefix(r.stderr, wantErr) || !strings.Contains(r.stderr, "Node.js v") {
		t.Fatalf("code %d\nstdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	// An 'uncaughtException' listener takes it, as in Node.
	r = v.run("", "node", "--input-type=module", "-e", `process.on('uncaughtException', (e) => console.log('caught', e.message)); await Promise.reject(new Error('late'));`)
	if r.code != 0 || r.stdout != "caught late\n" {
		t.Fatalf("listener: code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	v.writeFile("/workspace/stuck.mjs", "process.on('exit', (c) => console.log('exit', c));\nawait new Promise(() => {});\n")
	r = v.run("", "node", "stuck.mjs")
	if r.code != 13 || r.stdout != "exit 0\n" || !strings.HasPrefix(r.stderr, "Warning: Detected unsettled top-level await at file:///workspace/stuck.mjs:2\nawait new Promise(() => {});\n^\n") {
		t.Fatalf("unsettled: code %d\nstdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = v.run("", "node", "--input-type=module", "-e", "await new Promise(() => {}); ")
	if r.code != 13 {
		t.Fatalf("unsettled eval: code %d %s", r.code, r.stderr)
	}
	// process.exit() with a code wins over 13.
	r = v.run("", "node", "--input-type=module", "-e", "setTimeout(() => process.exit(0), 1); await new Promise(() => {});")
	if r.code != 0 {
		t.Fatalf("exit(0): code %d %s", r.code, r.stderr)
	}
}

// require() of an ES module graph: synchronous when no module in it
// awaits (Node 22), ERR_REQUIRE_ASYNC_MODULE before anything runs when
// one does.
func TestESMRequire(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/sync.mjs", "import dep from './dep.cjs';\nexport const v = dep + 1;\nexport default 'def';\n")
	v.writeFile("/workspace/dep.cjs", "module.exports = 41;\n")
	v.writeFile("/workspace/top.mjs", "import './inner.mjs';\nconsole.log('top ran');\n")
	v.writeFile("/workspace/inner.mjs", "console.log('inner ran');\nexport const t = await Promise.resolve('T');\n")
	v.writeFile("/workspace/main.cjs", `const m = require('./sync.mjs');
console.log(m.v, m.default, require('./sync.mjs') === m, Object.prototype.toString.call(m));
try { require('./top.mjs'); } catch (e) { console.log(e.code, e.message.split('\n').slice(1).join('|')); }
import('./top.mjs').then(() => console.log('imported'));
`)
	r := v.run("", "node", "main.cjs")
	want := "42 def true [object Module]\nERR_REQUIRE_ASYNC_MODULE   From /workspace/main.cjs |  Requiring /workspace/top.mjs \ninner ran\ntop ran\nimported\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("code %d\nstdout:\n%q\nwant\n%q\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}
}

// Import cycles do not deadlock; bindings are live, hoisted functions are
// usable across the cycle, and a let read before it is initialised throws,
// as in Node.
func TestESMCyclesAndBindings(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/a.mjs", "import { b } from './b.mjs';\nconsole.log('a body', b);\nexport let a = 'A';\nexport function fa() { return 'fa'; }\nexport function setA(x) { a = x; }\n")
	v.writeFile("/workspace/b.mjs", "import { fa, a } from './a.mjs';\nconsole.log('b body', fa());\ntry { a; } catch (e) { console.log('tdz', e.constructor.name); }\nawait 0;\nexport const b = 'B';\n")
	v.writeFile("/workspace/main.mjs", `import { a, setA } from './a.mjs';
import * as ns from './a.mjs';
import * as c from './c.cjs';
console.log('main', a); setA('changed'); console.log(a, ns.a, c.default.k, c.k, typeof require);
const { fa } = await import('./a.mjs');
console.log(fa(), (await import('./a.mjs')) === ns);
`)
	v.writeFile("/workspace/c.cjs", "exports.k = 'K';\n")
	r := v.run("", "node", "main.mjs")
	want := "b body fa\ntdz ReferenceError\na body B\nmain A\nchanged changed K K function\nfa true\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("code %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}
}

// Errors of import(): missing modules are ERR_MODULE_NOT_FOUND; a module
// that threw throws the same error to every later importer.
func TestESMImportErrors(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/thrower.mjs", "console.log('runs once');\nthrow new Error('at load');\n")
	v.writeFile("/workspace/main.mjs", `try { await import('./missing.mjs'); } catch (e) { console.log(e.code, e.message); }
try { await import('nopkg'); } catch (e) { console.log(e.code, e.message); }
for (let i = 0; i < 2; i++) try { await import('./thrower.mjs'); } catch (e) { console.log('caught', e.message); }
try { await import('https://example.com/x.mjs'); } catch (e) { console.log(e.code); }
`)
	r := v.run("", "node", "main.mjs")
	want := "ERR_MODULE_NOT_FOUND Cannot find module '/workspace/missing.mjs' imported from /workspace/main.mjs\n" +
		"ERR_MODULE_NOT_FOUND Cannot find package 'nopkg' imported from /workspace/main.mjs\n" +
		"runs once\ncaught at load\ncaught at load\nERR_UNSUPPORTED_ESM_URL_SCHEME\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("code %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}
}

// Anonymous default exports are named "default"; a JSON module has only
// a default export.
func TestESMDefaultsAndJSON(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/d.json", `{"a": [1, 2]}`)
	v.writeFile("/workspace/jd.mjs", "export default function () {}\nexport class K {}\n")
	v.writeFile("/workspace/ac.mjs", "export default class {}\n")
	v.writeFile("/workspace/main.mjs", `import data from './d.json' with { type: 'json' };
import * as ns from './d.json' with { type: 'json' };
import f, { K } from './jd.mjs';
import C from './ac.mjs';
console.log(data.a.length, Object.keys(ns).join(), f.name, K.name, C.name, import.meta.resolve('fs'));
`)
	r := v.run("", "node", "main.mjs")
	if want := "2 default default K default node:fs\n"; r.code != 0 || r.stdout != want {
		t.Fatalf("code %d\nstdout %q want %q\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}
}
