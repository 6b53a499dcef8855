package js

import (
	"strings"
	"testing"
)

// TypeScript runs with its types stripped by esbuild; stack traces and
// the uncaught-error report name the original file, line and column, as
// Node 22's type stripping (which keeps positions) does.
func TestTypeScriptPositions(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/lib.ts", `export interface Opts {
  n: number;
  label?: string;
}
type Never = never;
export function fail(o: Opts): Never {
  const label: string = o.label ?? 'fail';
  throw new Error(label + ' ' + o.n);
}
`)
	v.writeFile("/workspace/use.ts", `import { fail, type Opts } from './lib.ts';
enum Kind { A = 1, B }
type X = { y: string };
const o: Opts = { n: Kind.B };
function go(): void {
  fail(o);
}
try {
  go();
} catch (e: any) {
  console.log(e.stack.split('\n').slice(0, 4).join('\n'));
}
go();
`)
	r := v.run("", "node", "use.ts")
	wantOut := "Error: fail 2\n    at fail (/workspace/lib.ts:8:9)\n    at go (/workspace/use.ts:6:3)\n    at Object.<anonymous> (/workspace/use.ts:9:3)\n"
	wantErr := "/workspace/lib.ts:8\n  throw new Error(label + ' ' + o.n);\n        ^\n\nError: fail 2\n    at fail (/workspace/lib.ts:8:9)\n    at go (/workspace/use.ts:6:3)\n    at Object.<anonymous> (/workspace/use.ts:13:1)\n"
	if r.code != 1 || r.stdout != wantOut || !strings.HasPrefix(r.stderr, wantErr) {
		t.Fatalf("code %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s", r.code, r.stdout, wantOut, r.stderr, wantErr)
	}

	// An ES module in TypeScript: file: URLs, as Node shows them, and
	// positions after a top-level await the transform rewrote.
	v.writeFile("/workspace/m.mts", `import { fail } from './lib.ts';
interface P { x: number }
const p: P = { x: await Promise.resolve(4) }; const q: string = 'é'; const err = new Error('here');
console.log(err.stack.split('\n')[1]);
declare const nothing: unknown;
if (p.x > 3) fail({ n: p.x, label: q });
`)
	r = v.run("", "node", "m.mts")
	wantOut = "    at file:///workspace/m.mts:3:82\n"
	wantErr = "/workspace/lib.ts:8\n  throw new Error(label + ' ' + o.n);\n        ^\n\nError: é 4\n    at fail (/workspace/lib.ts:8:9)\n    at file:///workspace/m.mts:6:14\n"
	if r.code != 1 || r.stdout != wantOut || !strings.HasPrefix(r.stderr, wantErr) {
		t.Fatalf("mts: code %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s", r.code, r.stdout, wantOut, r.stderr, wantErr)
	}

	// The uncaught report of a throw in the entry module itself, and of
	// a CommonJS TypeScript module.
	v.writeFile("/workspace/top.mts", "type T = number;\n\ninterface U {}\nthrow new RangeError('top');\n")
	r = v.run("", "node", "top.mts")
	wantErr = "file:///workspace/top.mts:4\nthrow new RangeError('top');\n      ^\n\nRangeError: top\n    at file:///workspace/top.mts:4:7\n"
	if r.code != 1 || !strings.HasPrefix(r.stderr, wantErr) {
		t.Fatalf("top: code %d\nstderr:\n%s\nwant:\n%s", r.code, r.stderr, wantErr)
	}
	v.writeFile("/workspace/c.cts", "interface Q {\n  a: 1;\n}\nconst f = (q: Q): never => {\n    throw new TypeError('cts ' + q.a);\n};\nf({ a: 1 });\n")
	r = v.run("", "node", "c.cts")
	wantErr = "/workspace/c.cts:5\n    throw new TypeError('cts ' + q.a);\n          ^\n\nTypeError: cts 1\n    at f (/workspace/c.cts:5:11)\n"
	if r.code != 1 || !strings.HasPrefix(r.stderr, wantErr) {
		t.Fatalf("cts: code %d\nstderr:\n%s\nwant:\n%s", r.code, r.stderr, wantErr)
	}
}

// Stack mapping is installed only once a transformed script is loaded,
// and never replaces a formatter the program set itself.
func TestStackMappingInstall(t *testing.T) {
	v := newVM(t, nil)
	r := v.node(`console.log(typeof Error.prepareStackTrace)`)
	if r.stdout != "undefined\n" {
		t.Fatalf("plain CommonJS: %q %s", r.stdout, r.stderr)
	}
	v.writeFile("/workspace/x.ts", "const n: number = 1;\nexport const where = (): string => new Error('w').stack!.split('\\n')[1];\n")
	r = v.node(`Error.prepareStackTrace = (e, frames) => 'mine ' + frames[0].getLineNumber();
const x = require('./x.ts');
console.log(new Error('e').stack, typeof x.where, x.where());`)
	if r.code != 0 || r.stdout != "mine 3 function undefined\n" {
		t.Fatalf("own formatter: %q %s", r.stdout, r.stderr)
	}
	r = v.node(`const x = require('./x.ts'); console.log(x.where(), typeof Error.prepareStackTrace)`)
	if r.code != 0 || r.stdout != "    at Object.where (/workspace/x.ts:2:36) function\n" {
		t.Fatalf("mapped: %q %s", r.stdout, r.stderr)
	}
}
