package js

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/npmtest"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// toolRun is one command of a tool case: argv runs under node, in the
// case's directory, on the host and in a VM.
type toolRun struct {
	argv []string
	// env is added to the environment of both runs.
	env []string
	// exact asks for the same stdout and stderr as host node's, byte for
	// byte once the host's directories read as the VM's.
	exact bool
	// want are lines of stdout+stderr that host node prints (checked,
	// so that they stay true) and the VM must print too, colour codes
	// left out.
	want []string
}

// toolCase is a project of a few files and the tool commands run in it.
type toolCase struct {
	name  string
	files map[string]string
	runs  []toolRun
	// memory is each process's memory limit when the default (128 MiB)
	// is too little for the tool, as an agent would raise it.
	memory int64
}

// ansiCodes matches the terminal colour codes tools print.
var ansiCodes = regexp.MustCompile("\x1b\\[[0-9;]*m")

// hostResult is what a command printed and its exit code.
type hostResult struct {
	code           int
	stdout, stderr string
}

// runHostTool runs node with argv in dir, with env, and returns what it
// printed with dir and the node_modules tree (mods) read as /workspace
// and /workspace/node_modules, the paths the VM has them at.
func runHostTool(t *testing.T, hostNode, dir, mods string, env, argv []string) hostResult {
	t.Helper()
	cmd := exec.Command(hostNode, argv...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	realMods, err := filepath.EvalSymlinks(mods)
	if err != nil {
		t.Fatal(err)
	}
	vmPaths := strings.NewReplacer(realMods, "/workspace/node_modules", mods, "/workspace/node_modules", dir, "/workspace")
	return hostResult{code: code, stdout: vmPaths.Replace(stdout.String()), stderr: vmPaths.Replace(stderr.String())}
}

// Real tools, unmodified and installed with npm (testdata/npmtools,
// pinned by its lockfile), run in a VM as an agent runs them: each
// command's exit code and output are host node's running the same tool
// on the same files (host node is the oracle; the tools support the
// host's node 20 as well as the VM's node 22).
func TestNpmToolsUnmodified(t *testing.T) {
	mods := npmtest.Install(t, "testdata/npmtools", "npm-tools-")
	hostNode, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("the npm tools test needs node on the host as its oracle")
	}
	cases := []toolCase{{
		// mocha 12 in an ES module that declares its own __dirname: a
		// failing test exits 1, and its frame names the spec file.
		name: "mocha",
		files: map[string]string{
			"package.json": `{"name":"mt","private":true}`,
			"sum.spec.mjs": `import assert from 'node:assert';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
const __dirname = path.dirname(fileURLToPath(import.meta.url));
describe('sum', () => {
  it('adds', () => { assert.strictEqual(1 + 1, 3); });
  it('knows its directory', () => { assert.strictEqual(__dirname, process.cwd()); });
});
`,
			"ok.spec.mjs": "import assert from 'node:assert';\nit('passes', () => { assert.ok(true); });\n",
		},
		runs: []toolRun{
			{argv: []string{"node_modules/mocha/bin/mocha.js", "sum.spec.mjs"}, want: []string{
				"  1 passing", "  1 failing", "  1) sum\n       adds:\n", "      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
				"      at Context.<anonymous> (file:///workspace/sum.spec.mjs:6:29)"}},
			{argv: []string{"node_modules/mocha/bin/mocha.js", "ok.spec.mjs"}, want: []string{"  ✔ passes", "  1 passing"}},
		},
	}, {
		// prettier formats (its plugins load through import() inside
		// new Function) and --check fails on an unformatted file.
		name: "prettier",
		files: map[string]string{
			"in.js":   "const  a = {b:1,\n  c: [1,2,3]}\nfunction f( x ){return x*2}\n",
			"in.ts":   "interface P {a:string,b?:number}\nconst p:P={a:'x'}\n",
			"ok.json": "{ \"a\": 1 }\n",
		},
		runs: []toolRun{
			{argv: []string{"node_modules/prettier/bin/prettier.cjs", "in.js", "in.ts"}, exact: true},
			{argv: []string{"node_modules/prettier/bin/prettier.cjs", "--check", "in.js", "ok.json"}, exact: true,
				want: []string{"[warn] in.js", "Code style issues found in the above file. Run Prettier with --write to fix."}},
		},
	}, {
		// eslint with a flat config: the errors, and exit 1.
		name: "eslint",
		files: map[string]string{
			"package.json":     `{"name":"el","private":true}`,
			"eslint.config.js": "module.exports = [{ files: ['**/*.js'], languageOptions: { sourceType: 'commonjs', globals: { console: 'readonly' } }, rules: { 'no-unused-vars': 'error', 'no-undef': 'error', semi: 'error' } }];\n",
			"bad.js":           "const unused = 1;\nconsole.log(missing)\n",
			"good.js":          "console.log(1);\n",
		},
		runs: []toolRun{
			{argv: []string{"node_modules/eslint/bin/eslint.js", "bad.js", "good.js"}, exact: true,
				want: []string{"  1:7   error  'unused' is assigned a value but never used  no-unused-vars", "✖ 3 problems (3 errors, 0 warnings)"}},
			{argv: []string{"node_modules/eslint/bin/eslint.js", "good.js"}, exact: true},
			{argv: []string{"node_modules/eslint/bin/eslint.js", "--format", "json", "bad.js"}, exact: true},
		},
	}, {
		// yargs 18 (an ES module with the __dirname idiom inside):
		// parsing, and a missing option's help on stderr with exit 1.
		name: "yargs",
		files: map[string]string{
			"package.json": `{"name":"yt","private":true,"type":"module"}`,
			"cli.js": `import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
const argv = yargs(hideBin(process.argv)).scriptName('cli').option('n', { type: 'number', demandOption: true })
  .command('greet <who>', 'greets', (y) => y.positional('who', { type: 'string' }), (a) => console.log('hello', a.who, a.n * 2))
  .strict().parse();
console.log(JSON.stringify(argv._));
`,
		},
		runs: []toolRun{
			{argv: []string{"cli.js", "greet", "world", "-n", "21"}, exact: true, want: []string{"hello world 42", `["greet"]`}},
			{argv: []string{"cli.js", "greet", "world"}, exact: true, want: []string{"Missing required argument: n"}},
			{argv: []string{"cli.js", "--help"}, exact: true, want: []string{"cli greet <who>  greets"}},
		},
	}, {
		// typescript 5's tsc type-checks (a type error exits 2 with
		// tsc's message) and compiles what runs under node. It loads a
		// 9 MB compiler and the lib .d.ts files: more than 128 MiB of heap.
		name:   "tsc",
		memory: 512 << 20,
		files: map[string]string{
			"package.json":  `{"name":"ts","private":true,"type":"module"}`,
			"tsconfig.json": `{ "compilerOptions": { "target": "ES2022", "module": "nodenext", "strict": true, "outDir": "out" }, "include": ["src"] }`,
			"src/add.ts":    "export function add(a: number, b: number): number { return a + b; }\n",
			"src/main.ts":   "import { add } from './add.js';\nconst s: string = add(1, 2);\nconsole.log(s);\n",
		},
		runs: []toolRun{
			{argv: []string{"node_modules/typescript/bin/tsc", "-p", "."}, exact: true,
				want: []string{"src/main.ts(2,7): error TS2322: Type 'number' is not assignable to type 'string'."}},
			{argv: []string{"out/main.js"}, exact: true, want: []string{"3\n"}},
		},
	}, {
		// tsx runs TypeScript through esbuild-wasm (esbuild's native
		// binary cannot run in a VM). esbuild's synchronous API runs its
		// service in a worker thread, which a VM does not have:
		// ESBUILD_WORKER_THREADS=0, esbuild's own switch, makes it run
		// the service as a child node process instead.
		name: "tsx",
		files: map[string]string{
			"package.json": `{"name":"tt","private":true,"type":"module"}`,
			"main.ts": `import path from 'node:path';
import { double } from './lib.ts';
interface P { n: number }
const p: P = { n: 21 };
console.log(path.basename(import.meta.filename), double(p.n));
`,
			"lib.ts": "export const double = (n: number): number => n * 2;\n",
		},
		runs: []toolRun{
			{argv: []string{"node_modules/tsx/dist/cli.mjs", "main.ts"}, env: []string{"ESBUILD_WORKER_THREADS=0"}, exact: true, want: []string{"main.ts 42"}},
		},
	}, {
		// @swc/wasm, swc's WebAssembly build (its native one cannot run
		// in a VM): TypeScript with decorators to JavaScript, a parse
		// and a minification.
		name: "swc",
		files: map[string]string{
			"swc.cjs": `const swc = require('@swc/wasm');
const src = '@sealed class A { @log m(x: number): number { return x * 2; } }\nfunction sealed(c: any) {}\nfunction log(...a: any[]) {}\nexport const n: number = new A().m(21);\n';
console.log(swc.transformSync(src, { jsc: { parser: { syntax: 'typescript', decorators: true }, target: 'es2022' } }).code);
console.log(swc.parseSync('let a = 1; a++', { syntax: 'ecmascript' }).body.map((s) => s.type).join());
console.log(swc.minifySync('function add(first, second) { return first + second; } console.log(add(1, 2));', { mangle: true, compress: true }).code);
`,
		},
		runs: []toolRun{
			{argv: []string{"swc.cjs"}, exact: true, want: []string{"VariableDeclaration,ExpressionStatement"}},
		},
	}, {
		// esbuild-wasm (esbuild's WebAssembly build, which the tree has
		// for esbuild): the asynchronous API talks to a child node
		// process serving esbuild over its stdin and stdout.
		name: "esbuild-wasm",
		files: map[string]string{
			"es.mjs": `import * as esbuild from 'esbuild';
const t = await esbuild.transform('const n: number = 40 + 2; export default n;', { loader: 'ts', format: 'cjs' });
console.log(t.code);
const b = await esbuild.build({ stdin: { contents: 'import { x } from "./x.js"; console.log(x * 2);', resolveDir: '.' }, bundle: true, write: false, format: 'esm', logLevel: 'silent' });
console.log(b.outputFiles[0].text);
await esbuild.stop();
`,
			"x.js": "export const x = 21;\n",
		},
		runs: []toolRun{
			{argv: []string{"es.mjs"}, exact: true, want: []string{"const n = 40 + 2;", "console.log(x * 2);"}},
		},
	}, {
		// vitest 4 (vite 7, rollup as @rollup/wasm-node, esbuild as
		// esbuild-wasm; its tests run in forked node processes): a
		// failing test exits 1 and its frame names the test file.
		name: "vitest",
		files: map[string]string{
			"package.json": `{"name":"vt","private":true,"type":"module"}`,
			"sum.test.js":  "import { test, expect } from 'vitest';\ntest('adds', () => { expect(1 + 1).toBe(3); });\ntest('ok', () => { expect(2).toBe(2); });\n",
			"ok.test.ts":   "import { test, expect } from 'vitest';\nconst n: number = 2;\ntest('typed', () => { expect(n * 21).toBe(42); });\n",
		},
		runs: []toolRun{
			{argv: []string{"node_modules/vitest/vitest.mjs", "run", "sum.test.js"}, want: []string{
				" FAIL  sum.test.js > adds", "AssertionError: expected 2 to be 3 // Object.is equality", " ❯ sum.test.js:2:36",
				"      Tests  1 failed | 1 passed (2)"}},
			{argv: []string{"node_modules/vitest/vitest.mjs", "run", "ok.test.ts"}, want: []string{" ✓ ok.test.ts (1 test)", "      Tests  1 passed (1)"}},
		},
	}, {
		// vite 7 builds a small app (rollup as @rollup/wasm-node,
		// esbuild-wasm minifying) into the files host node builds.
		name: "vite",
		files: map[string]string{
			"package.json":  `{"name":"app","private":true,"type":"module"}`,
			"index.html":    `<!doctype html><html><head><title>app</title></head><body><div id="app"></div><script type="module" src="/src/main.js"></script></body></html>`,
			"src/main.js":   "import { greet } from './greet.js';\nimport './style.css';\ndocument.querySelector('#app').textContent = greet('vite');\n",
			"src/greet.js":  "export const greet = (name) => `hello ${name}`;\nexport const unused = () => 'shaken off';\n",
			"src/style.css": "#app { color: rebeccapurple; }\n",
			"show.cjs": `const fs = require('fs'), path = require('path');
const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))
  .flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
for (const f of walk('dist')) console.log('== ' + f + '\\n' + fs.readFileSync(f, 'utf8'));
`,
		},
		runs: []toolRun{
			{argv: []string{"node_modules/vite/bin/vite.js", "build"}, want: []string{"✓ 5 modules transformed.", "dist/index.html"}},
			{argv: []string{"show.cjs"}, exact: true, want: []string{"== dist/index.html", "hello ${"}},
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			host := t.TempDir()
			if err := os.Symlink(mods, filepath.Join(host, "node_modules")); err != nil {
				t.Fatal(err)
			}
			v := newConfiguredVM(t, engine(t), vm.Config{
				Limits: kernel.Limits{MemoryBytes: c.memory},
				Mounts: []vm.Mount{{Path: "/workspace/node_modules", HostDir: mods, ReadOnly: true}},
			})
			for name, data := range c.files {
				if dir := filepath.Dir(name); dir != "." {
					if _, err := os.Stat(filepath.Join(host, dir)); err != nil {
						if err := os.Mkdir(filepath.Join(host, dir), 0o755); err != nil {
							t.Fatal(err)
						}
						mkdir(t, v, "/workspace/"+dir)
					}
				}
				if err := os.WriteFile(filepath.Join(host, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
				v.writeFile("/workspace/"+name, data)
			}
			for _, run := range c.runs {
				want := runHostTool(t, hostNode, host, filepath.Join(host, "node_modules"), append([]string{"PATH=/usr/bin:/bin", "HOME=" + host}, run.env...), run.argv)
				for _, w := range run.want {
					if !strings.Contains(ansiCodes.ReplaceAllString(want.stdout+want.stderr, ""), w) {
						t.Fatalf("%q: host node does not print %q\nstdout:\n%s\nstderr:\n%s", run.argv, w, want.stdout, want.stderr)
					}
				}
				got := v.runEnv("", append([]string{"PATH=/usr/bin:/bin", "HOME=/workspace"}, run.env...), append([]string{"node"}, run.argv...)...)
				if got.code != want.code {
					t.Errorf("%q: exit %d, host %d\nstdout:\n%s\nstderr:\n%s", run.argv, got.code, want.code, got.stdout, trunc(got.stderr))
					continue
				}
				for _, w := range run.want {
					if !strings.Contains(ansiCodes.ReplaceAllString(got.stdout+got.stderr, ""), w) {
						t.Errorf("%q: missing %q\nstdout:\n%s\nstderr:\n%s", run.argv, w, got.stdout, trunc(got.stderr))
					}
				}
				if run.exact && (got.stdout != want.stdout || got.stderr != want.stderr) {
					t.Errorf("%q: output differs from host node's\n--- stdout\n%s\n--- host stdout\n%s\n--- stderr\n%s\n--- host stderr\n%s",
						run.argv, got.stdout, want.stdout, got.stderr, want.stderr)
				}
			}
		})
	}
}

// fastify 5, unmodified, serves in a VM and answers the host (through the
// kernel's DialGuest, as vm.Net does): routes with params and a JSON
// schema, whose validation error is fastify's 400.
func TestFastifyFromHost(t *testing.T) {
	mods := npmtest.Install(t, "testdata/npmtools", "npm-tools-")
	v := newVM(t, nil, vm.Mount{Path: "/workspace/node_modules", HostDir: mods, ReadOnly: true})
	v.writeFile("/workspace/server.js", `
const fastify = require('fastify')();
fastify.get('/hello/:name', async (req) => ({ hello: req.params.name, q: req.query.q }));
fastify.post('/sum', { schema: { body: { type: 'object', required: ['a', 'b'], properties: { a: { type: 'number' }, b: { type: 'number' } } } } },
  async (req, reply) => reply.code(201).send({ sum: req.body.a + req.body.b }));
fastify.get('/bye', async () => { setImmediate(() => fastify.close()); return 'bye'; });
fastify.listen({ port: 3000, host: '127.0.0.1' }).then((addr) => console.log('listening', addr));
`)
	k := v.vm.Kernel
	outW, out := collect(k, t)
	errW, errOut := collect(k, t)
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"node", "server.js"},
		Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/workspace", Files: []vfs.File{nil, outW, errW}})
	outW.DecRef()
	errW.DecRef()
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return k.DialGuest(ctx, 3000) },
	}}
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, "http://app"+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("content-type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v\nstderr: %s", method, path, err, trunc(errOut()))
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	// The server is up once a connection is accepted.
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := k.DialGuest(context.Background(), 3000)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			_ = p.Signal(kernel.SIGKILL)
			t.Fatalf("fastify never listened: %v\nstderr: %s", err, trunc(errOut()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, c := range []struct{ method, path, body, want string }{
		{"GET", "/hello/host?q=1", "", `200 {"hello":"host","q":"1"}`},
		{"POST", "/sum", `{"a":2,"b":40}`, `201 {"sum":42}`},
		{"POST", "/sum", `{"a":2}`, `400 {"statusCode":400,"code":"FST_ERR_VALIDATION","error":"Bad Request","message":"body must have required property 'b'"}`},
		{"GET", "/nope", "", `404 {"message":"Route GET:/nope not found","error":"Not Found","statusCode":404}`},
		{"GET", "/bye", "", "200 bye"},
	} {
		if code, body := do(c.method, c.path, c.body); fmt.Sprint(code, " ", body) != c.want {
			t.Errorf("%s %s: %d %s, want %s", c.method, c.path, code, body, c.want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if st, err := p.HostWait(ctx); err != nil || st.ShellCode() != 0 {
		_ = p.Signal(kernel.SIGKILL)
		t.Errorf("the server ended with %v, %v\nstderr: %s", st, err, trunc(errOut()))
	}
	if got := out(); got != "listening http://127.0.0.1:3000\n" {
		t.Errorf("stdout %q", got)
	}
}

// A native addon (a package's prebuilt .node file) fails to load, by
// require, import and process.dlopen, with Node's code for disabled
// addons and one line that names the file, says native code cannot run
// in the sandbox and which WebAssembly builds to use instead: npm
// packages show it, or wrap it as their error's cause.
func TestNativeAddonSaysSo(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/addon.node", "\x7fELF\x02\x01\x01\x00"+strings.Repeat("\x00", 64))
	v.writeFile("/workspace/load.mjs", `
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const show = (how, e) => console.log(how, e.name, e.code, JSON.stringify(e.message));
try { require('./addon.node'); } catch (e) { show('require', e); }
try { await import('./addon.node'); } catch (e) { show('import', e); }
try { process.dlopen({ exports: {} }, '/workspace/addon.node'); } catch (e) { show('dlopen', e); }
`)
	r := v.run("", "node", "load.mjs")
	const why = ` because loading addons is disabled: native code cannot run in the sandbox (it runs WebAssembly and JavaScript); use a WebAssembly or JavaScript build of the package, e.g. esbuild-wasm or @swc/wasm."`
	want := "require Error ERR_DLOPEN_DISABLED \"Cannot load native addon /workspace/addon.node" + why + "\n" +
		"import Error ERR_DLOPEN_DISABLED \"Cannot load native addon /workspace/addon.node" + why + "\n" +
		"dlopen Error ERR_DLOPEN_DISABLED \"Cannot load native addon /workspace/addon.node" + why + "\n"
	if r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", r.code, r.stdout, want, trunc(r.stderr))
	}

	// A loader that swallows the refusal and fails with an unrelated
	// message (jest 30: "runner.js was not found"): the failing process
	// names the addon on one last line of stderr. One that recovers (a
	// native speed-up with a JavaScript fallback) stays quiet, above.
	v.writeFile("/workspace/swallow.js", `
let binding = null;
try { binding = require('./addon.node'); } catch { /* try the next candidate */ }
if (!binding) { console.error('Module runner.js in the testRunner option was not found.'); process.exitCode = 1; }
`)
	r = v.run("", "node", "swallow.js")
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	note := "node: this process tried to load native addon /workspace/addon.node, which cannot run in the sandbox (it runs JavaScript and WebAssembly): install a WebAssembly or JavaScript build of the package"
	if r.code != 1 || len(lines) != 2 || lines[1] != note {
		t.Fatalf("swallowed refusal: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = v.run("", "node", "-e", `try { require('./addon.node') } catch {} throw new Error('unrelated')`)
	if r.code != 1 || !strings.HasSuffix(r.stderr, note+"\n") || !strings.Contains(r.stderr, "Error: unrelated") {
		t.Fatalf("uncaught after a refusal: exit %d, stderr:\n%s", r.code, r.stderr)
	}

	// npm and the napi-rs loaders read the C library from the diagnostic
	// report; Node's official Linux build names glibc, and without it npm
	// refused glibc-only packages ("Actual libc: null").
	r = v.run("", "node", "-p", `const h = process.report.getReport().header; [h.glibcVersionRuntime, h.osName, h.arch, h.nodejsVersion === process.version].join(' ')`)
	if r.code != 0 || r.stdout != "2.36 Linux x64 true\n" {
		t.Fatalf("report header: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}
