package js

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestNodeHello(t *testing.T) {
	v := newVM(t, nil)
	r := v.node("console.log(1+1)")
	if r.code != 0 || r.stdout != "2\n" || r.stderr != "" {
		t.Fatalf("code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

// nodeEvalCases are small scripts and what Node 22 prints for them (run
// as node -e CODE x y). TestNodeTablesMatchHostNode confirms each against
// the host's node, as mvdan/sh confirms its tables against bash, except
// those whose vmOnly says why the VM's answer differs from a host's.
var nodeEvalCases = []struct {
	name, code, want string
	wantCode         int
	vmOnly           string
}{
	{"inspect", `console.log({a:1,b:'x',c:[1,2,3]}, new Map([[1,2]]), new Set([1]), null, undefined)`, "{ a: 1, b: 'x', c: [ 1, 2, 3 ] } Map(1) { 1 => 2 } Set(1) { 1 } null undefined\n", 0, ""},
	{"format", `console.log('%s=%d %j', 'a', 42, {x:1})`, "a=42 {\"x\":1}\n", 0, ""},
	{"argv", `console.log(process.argv.slice(1).join(','))`, "x,y\n", 0, ""},
	{"exitCode", `process.exitCode = 3`, "", 3, ""},
	{"exit", `process.exit(5); console.log('no')`, "", 5, ""},
	{"onexit", `process.on('exit', (c) => console.log('bye', c)); console.log('hi')`, "hi\nbye 0\n", 0, ""},
	{"timers", `setTimeout(() => console.log('b'), 500); setImmediate(() => console.log('a')); Promise.resolve().then(() => console.log('p')); process.nextTick(() => console.log('t'))`, "t\np\na\nb\n", 0, ""},
	{"interval", `let n = 0; const i = setInterval(() => { if (++n === 3) { clearInterval(i); console.log('done', n) } }, 1)`, "done 3\n", 0, ""},
	{"unref", `setTimeout(() => console.log('never'), 100000).unref(); console.log('x')`, "x\n", 0, ""},
	{"buffer", `const b = Buffer.from('héllo'); console.log(b, b.toString('base64'), b.toString('hex'), b.length)`, "<Buffer 68 c3 a9 6c 6c 6f> aMOpbGxv 68c3a96c6c6f 6\n", 0, ""},
	{"path", `const p = require('path'); console.log(p.join('/a/b', '../c'), p.basename('/x/y.js', '.js'), p.resolve('q'))`, "/a/c y /workspace/q\n", 0, "resolves against the VM's working directory, /workspace"},
	{"events", `const E = require('events'); const e = new E(); e.once('x', (v) => console.log('got', v)); e.emit('x', 1); e.emit('x', 2)`, "got 1\n", 0, ""},
	{"util", `const u = require('util'); console.log(u.format('%o', [1]), u.inspect('s'), u.types.isDate(new Date()), typeof u.promisify)`, "[ 1, [length]: 1 ] 's' true function\n", 0, ""},
	{"fs", `const fs = require('fs'); fs.writeFileSync('/tmp/a.txt', 'hi'); fs.appendFileSync('/tmp/a.txt', '!'); console.log(fs.readFileSync('/tmp/a.txt', 'utf8'), fs.existsSync('/tmp/a.txt'), fs.statSync('/tmp/a.txt').size, fs.readdirSync('/tmp'))`, "hi! true 3 [ 'a.txt' ]\n", 0, "writes and lists the VM's /tmp"},
	{"fsErr", `try { require('fs').readFileSync('/nope') } catch (e) { console.log(e.message, e.code, e.errno, e.syscall, e.path) }`, "ENOENT: no such file or directory, open '/nope' ENOENT -2 open /nope\n", 0, ""},
	{"fsMkdir", `const fs = require('fs'); console.log(fs.mkdirSync('/tmp/x/y/z', {recursive: true})); fs.rmSync('/tmp/x', {recursive: true}); console.log(fs.existsSync('/tmp/x'))`, "/tmp/x\nfalse\n", 0, "writes the VM's /tmp"},
	{"fsPromises", `require('fs').promises.writeFile('/tmp/p', 'data').then(() => require('fs/promises').readFile('/tmp/p', 'utf8')).then(console.log)`, "data\n", 0, "writes the VM's /tmp"},
	{"fsCallback", `require('fs').readdir('/', (e, l) => console.log(e, l.includes('tmp')))`, "null true\n", 0, ""},
	{"cwd", `console.log(process.cwd()); process.chdir('/tmp'); console.log(process.cwd())`, "/workspace\n/tmp\n", 0, "the VM's working directory is /workspace"},
	{"env", `console.log(process.env.HOME)`, "/home/user\n", 0, "the VM's HOME"},
	{"platform", `console.log(process.platform, process.versions.node.split('.')[0], typeof process.hrtime.bigint())`, "linux 22 bigint\n", 0, "names Node 22, which the host's node need not be"},
	{"os", `const os = require('os'); console.log(os.hostname(), os.platform(), os.EOL === '\n', os.homedir())`, "secexec linux true /home/user\n", 0, "the VM's host name and home"},
	{"stdout", `process.stdout.write('a'); process.stdout.write(Buffer.from([0x62, 0xff, 0x0a]))`, "ab\xff\n", 0, ""},
	{"uncaught", `throw new Error('boom')`, "", 1, ""},
	{"url", `const u = new URL('https://a.b/c?d=1#e'); console.log(u.hostname, u.searchParams.get('d'), require('url').parse('http://x/y').pathname)`, "a.b 1 /y\n", 0, ""},
	{"crypto", `const c = require('crypto'); console.log(c.createHash('sha256').update('abc').digest('hex'), c.createHmac('md5', 'k').update('m').digest('base64'), c.randomBytes(8).length, c.randomUUID().length)`, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad 7X5yTTqRVUqqIEMEHZxTBQ== 8 36\n", 0, ""},
	{"zlib", `const z = require('zlib'); console.log(z.gunzipSync(z.gzipSync('hello')).toString(), z.inflateSync(z.deflateSync(Buffer.alloc(1e6))).length)`, "hello 1000000\n", 0, ""},
	{"textcodec", `console.log(new TextDecoder().decode(new TextEncoder().encode('héllo €')), atob(btoa('hi')))`, "héllo € hi\n", 0, ""},
	{"structuredClone", `const o = structuredClone({a: new Map([[1, {b: 2}]]), d: new Date(0)}); console.log(o.a.get(1).b, o.d.getTime())`, "2 0\n", 0, ""},
	{"abort", `const ac = new AbortController(); ac.signal.addEventListener('abort', () => console.log('aborted', ac.signal.aborted)); ac.abort()`, "aborted true\n", 0, ""},
	{"querystring", `console.log(require('querystring').stringify({a: 1, b: 'x y'}))`, "a=1&b=x%20y\n", 0, ""},
	{"string_decoder", `const {StringDecoder} = require('string_decoder'); const d = new StringDecoder('utf8'); console.log(d.write(Buffer.from([0xe2, 0x82])) + d.write(Buffer.from([0xac])))`, "€\n", 0, ""},
	{"assert", `try { require('assert').strictEqual(1, 2) } catch (e) { console.log(e.code) }`, "ERR_ASSERTION\n", 0, ""},
	{"stream", `const {Readable} = require('stream'); Readable.from(['a', 'b']).on('data', (d) => console.log(d))`, "a\nb\n", 0, ""},
	{"workerPath", `try { new (require('worker_threads').Worker)('x.js') } catch (e) { console.log(e.code) }`, "ERR_WORKER_PATH\n", 0, ""},
	{"worker", `const { Worker } = require('worker_threads'); const w = new Worker('require("worker_threads").parentPort.postMessage(require("worker_threads").workerData * 2)', { eval: true, workerData: 21 }); w.on('message', (m) => console.log('got', m)); w.on('exit', (c) => console.log('exit', c))`, "got 42\nexit 0\n", 0, ""},
	{"binding", `try { process.binding('fs') } catch (e) { console.log(e.code) }`, "ERR_ACCESS_DENIED\n", 0, "sandbox policy: process.binding is refused"},
	{"noSAB", `console.log(typeof SharedArrayBuffer)`, "undefined\n", 0, "sandbox policy: no SharedArrayBuffer"},
	{"coarseDate", `const a = Date.now(), p = performance.now(); const end = a + 5; while (Date.now() < end); const d = Date.now(), nd = new Date().getTime(), d2 = Date.now(); console.log(d >= end, d <= nd && nd <= d2, Number.isInteger(performance.now() - p))`, "true true true\n", 0, "sandbox policy: coarse clocks"},
	{"asyncAwait", `(async () => { await new Promise(r => setTimeout(r, 1)); console.log('after') })()`, "after\n", 0, ""},
	{"require.resolve", `console.log(require.resolve('fs'), require('module').isBuiltin('node:path'))`, "fs true\n", 0, ""},
}

// TestNodeEval runs nodeEvalCases in a VM.
func TestNodeEval(t *testing.T) {
	v := newVM(t, nil)
	for _, c := range nodeEvalCases {
		t.Run(c.name, func(t *testing.T) {
			r := v.node(c.code, "x", "y")
			if r.stdout != c.want || r.code != c.wantCode {
				t.Errorf("code %d (want %d)\nstdout %q\nwant   %q\nstderr %s", r.code, c.wantCode, r.stdout, c.want, r.stderr)
			}
		})
	}
}

// nodePrintCases are node -p expressions (with one argument, z) and what
// Node 22 prints.
var nodePrintCases = map[string]string{"1+1": "2\n", "'a'": "a\n", "[1,'b']": "[ 1, 'b' ]\n", "process.argv.length": "2\n"}

func TestNodePrint(t *testing.T) {
	v := newVM(t, nil)
	for code, want := range nodePrintCases {
		r := v.run("", "node", "-p", code, "z")
		if r.stdout != want || r.code != 0 {
			t.Errorf("-p %s: %q (code %d, stderr %s)", code, r.stdout, r.code, r.stderr)
		}
	}
}

func TestNodeUncaughtStack(t *testing.T) {
	v := newVM(t, nil)
	r := v.node("function f() { throw new TypeError('bad thing') }\nf()")
	if r.code != 1 || !strings.Contains(r.stderr, "TypeError: bad thing") || !strings.Contains(r.stderr, "at f ([eval]") || !strings.Contains(r.stderr, "Node.js v22") {
		t.Fatalf("code %d stderr:\n%s", r.code, r.stderr)
	}
}

// nodeMiscCases are command lines with their stdin and what Node 22
// prints; TestNodeTablesMatchHostNode confirms them as nodeEvalCases.
var nodeMiscCases = []struct {
	argv   []string
	stdin  string
	want   string
	vmOnly string
}{
	{[]string{"node", "--input-type=module", "-e", "import os from 'os'; console.log(os.platform(), typeof import.meta.url)"}, "", "linux string\n", ""},
	{[]string{"node", "-e", "process.on('SIGTERM', (s) => { console.log('got', s); process.exit(0) }); process.kill(process.pid, 'SIGTERM'); setTimeout(() => console.log('late'), 5000)"}, "", "got SIGTERM\n", ""},
	{[]string{"node", "-"}, "console.log(process.argv.length, process.argv[1])", "2 -\n", ""},
	{[]string{"node", "-", "a"}, "console.log(process.argv.slice(1))", "[ '-', 'a' ]\n", ""},
	{[]string{"node", "--version"}, "", "v22.12.0\n", "names Node 22, which the host's node need not be"},
	{[]string{"node", "-e", "process.stdout.write('x'.repeat(1 << 20)); console.log()"}, "", strings.Repeat("x", 1<<20) + "\n", ""},
	{[]string{"node", "-e", "const b = require('fs').readFileSync('/dev/stdin'); console.log(b.length, b[0], b[b.length - 1])"}, string([]byte{0, 1, 2, 255}), "4 0 255\n", ""},
}

func TestNodeMisc(t *testing.T) {
	v := newVM(t, nil)
	cases := nodeMiscCases
	for _, c := range cases {
		r := v.run(c.stdin, c.argv...)
		if c.want == "" {
			t.Logf("%q: code %d stdout %q stderr %q", c.argv, r.code, r.stdout, trunc(r.stderr))
			continue
		}
		if r.stdout != c.want {
			t.Errorf("%q: code %d stdout %q want %q stderr %s", c.argv, r.code, trunc(r.stdout), trunc(c.want), trunc(r.stderr))
		}
	}
	if r := v.run("", "node", "--bogus"); r.code != 9 || !strings.Contains(r.stderr, "bad option: --bogus") {
		t.Errorf("bad option: %+v", r)
	}
}

// util.getCallSites follows Node 22.14 (test/parallel/test-util-getcallsites.js,
// whose first block test/common's mustNotCall runs in hundreds of Node's
// tests): the frames and their positions are what Node 22.12 prints for the
// same file, arguments are validated with Node's codes and messages, and
// neither Error.stackTraceLimit nor Error.prepareStackTrace changes the
// answer.
func TestUtilGetCallSites(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/cs.js", `const util = require('util');
function inner() { return util.getCallSites(3); }
function outer() { return inner(); }
const s = outer();
console.log(JSON.stringify(s.map(({functionName, scriptName, lineNumber, column}) => ({functionName, scriptName, lineNumber, column}))));
for (const bad of [0, 201, 'x', 0.5, -1, [], NaN]) { try { util.getCallSites(bad); console.log('ok', bad) } catch (e) { console.log(e.code, e.message) } }
for (const args of [[{}, {}], [10, 10], [{sourceMap: 1}], [1, {sourceMap: 1}]]) { try { util.getCallSites(...args); console.log('ok') } catch (e) { console.log(e.code, e.message) } }
console.log(util.getCallSites(3.6).length, util.getCallSites({}).length > 1, util.getCallSites(1, {}).length);
Error.stackTraceLimit = 0; console.log(util.getCallSites().length > 1); Error.stackTraceLimit = 10;
Error.prepareStackTrace = () => 'x'; const [c] = util.getCallSites(1); console.log(typeof c.scriptId, c.lineNumber, c.columnNumber === c.column);
`)
	r := v.run("", "node", "/workspace/cs.js")
	want := `[{"functionName":"inner","scriptName":"/workspace/cs.js","lineNumber":2,"column":32},{"functionName":"outer","scriptName":"/workspace/cs.js","lineNumber":3,"column":27},{"functionName":"","scriptName":"/workspace/cs.js","lineNumber":4,"column":11}]
ERR_OUT_OF_RANGE The value of "frameCount" is out of range. It must be >= 1 && <= 200. Received 0
ERR_OUT_OF_RANGE The value of "frameCount" is out of range. It must be >= 1 && <= 200. Received 201
ERR_INVALID_ARG_TYPE The "frameCount" argument must be of type number. Received type string ('x')
ERR_OUT_OF_RANGE The value of "frameCount" is out of range. It must be >= 1 && <= 200. Received 0.5
ERR_OUT_OF_RANGE The value of "frameCount" is out of range. It must be >= 1 && <= 200. Received -1
ERR_INVALID_ARG_TYPE The "options" argument must be of type object. Received an instance of Array
ERR_OUT_OF_RANGE The value of "frameCount" is out of range. It must be >= 1 && <= 200. Received NaN
ERR_INVALID_ARG_TYPE The "frameCount" argument must be of type number. Received an instance of Object
ERR_INVALID_ARG_TYPE The "options" argument must be of type object. Received type number (10)
ERR_INVALID_ARG_TYPE The "options.sourceMap" property must be of type boolean. Received type number (1)
ERR_INVALID_ARG_TYPE The "options.sourceMap" property must be of type boolean. Received type number (1)
3 true 1
true
string 10 true
`
	if r.code != 0 || r.stdout != want {
		t.Fatalf("code %d stderr %q\nstdout:\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want)
	}
	if r := v.node(`process.stdout.write(require('util').getCallSites()[0].scriptName)`); r.stdout != "[eval]" {
		t.Errorf("node -e: scriptName %q, want [eval]", r.stdout)
	}

	// --experimental-transform-types turns source maps on, so call sites
	// name the TypeScript's own line (8) and column (18) unless
	// --no-enable-source-maps or {sourceMap: false} say otherwise, as in
	// Node 22.14's test-util-getcallsites.
	v.writeFile("/workspace/cs.ts", `const { getCallSites } = require('node:util');

interface CallSite {
  A;
  B;
}

const callSite = getCallSites()[0];
const explicit = getCallSites({ sourceMap: false })[0];
console.log(callSite.lineNumber, callSite.column, callSite.columnNumber, explicit.lineNumber === 9);
`)
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--experimental-transform-types"}, "8 18 18 false\n"},
		{[]string{"--experimental-transform-types", "--enable-source-maps"}, "8 18 18 false\n"},
		{[]string{"--no-enable-source-maps", "--experimental-transform-types"}, ""},
	} {
		r := v.run("", append(append([]string{"node"}, c.flags...), "/workspace/cs.ts")...)
		if r.code != 0 {
			t.Errorf("%v: code %d stderr %q", c.flags, r.code, r.stderr)
			continue
		}
		if c.want != "" && r.stdout != c.want {
			t.Errorf("%v: %q, want %q", c.flags, r.stdout, c.want)
		}
		if c.want == "" && strings.HasPrefix(r.stdout, "8 ") {
			t.Errorf("%v: %q: mapped although source maps are off", c.flags, r.stdout)
		}
	}
}

// The deprecated timers.enroll/unenroll/active/_unrefActive and util.log
// print what Node 22.12 prints for the same script (the log's time stamp
// masked): validation, scheduling, the deprecation warnings once each.
func TestDeprecatedTimersAndUtilLog(t *testing.T) {
	script := `const timers = require('timers');
const util = require('util');
process.on('warning', (w) => console.log('warning', w.name, w.code, w.message));
const item = { _onTimeout() { console.log('fired', this._idleTimeout) } };
timers.enroll(item, 10); console.log(item._idleTimeout);
timers.active(item);
timers._unrefActive({ _idleTimeout: -1 });
const it2 = { _onTimeout() { console.log('never') } }; timers.enroll(it2, 5); timers.active(it2); timers.unenroll(it2); console.log(it2._idleTimeout);
for (const bad of ['x', -1, Infinity]) try { timers.enroll({}, bad) } catch (e) { console.log(e.code, e.message) }
util.log('hello %d', 5);
`
	stamp := regexp.MustCompile(`(?m)^\d+ [A-Z][a-z]{2} \d\d:\d\d:\d\d - `)
	hostFile := filepath.Join(t.TempDir(), "t.js")
	if err := os.WriteFile(hostFile, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node22(t), hostFile).Output()
	if err != nil {
		t.Fatalf("Node 22.12 (the oracle): %v", err)
	}
	want := stamp.ReplaceAllString(string(out), "STAMP - ")
	if !strings.Contains(want, "STAMP - hello 5") || !strings.Contains(want, "DEP0095") {
		t.Fatalf("the oracle printed %q", want)
	}
	v := newVM(t, nil)
	v.writeFile("/workspace/t.js", script)
	r := v.run("", "node", "/workspace/t.js")
	if got := stamp.ReplaceAllString(r.stdout, "STAMP - "); r.code != 0 || got != want {
		t.Fatalf("code %d stderr %q\nstdout:\n%s\nNode 22.12:\n%s", r.code, r.stderr, got, want)
	}
}

// TestNodeTablesMatchHostNode runs the hand-written tables above under the
// host's node: an expectation the real Node does not print is a wrong
// test, whatever secexec prints. Each runs in a private temporary
// directory with a minimal environment.
func TestNodeTablesMatchHostNode(t *testing.T) {
	hostNode, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("this test needs node on the host (.ci/run installs it)")
	}
	run := func(t *testing.T, stdin string, args ...string) (string, int) {
		t.Helper()
		tmp := t.TempDir()
		cmd := exec.Command(hostNode, args...)
		cmd.Dir = tmp
		cmd.Env = []string{"PATH=" + filepath.Dir(hostNode), "TMPDIR=" + tmp, "HOME=" + tmp}
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		code := 0
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		if code != 0 {
			t.Logf("host stderr: %s", trunc(errOut.String()))
		}
		return out.String(), code
	}
	confirmed := 0
	for _, c := range nodeEvalCases {
		if c.vmOnly != "" {
			continue
		}
		t.Run("eval/"+c.name, func(t *testing.T) {
			out, code := run(t, "", "-e", c.code, "x", "y")
			if out != c.want || code != c.wantCode {
				t.Errorf("host node: code %d stdout %q; the table says code %d stdout %q", code, out, c.wantCode, c.want)
			}
		})
		confirmed++
	}
	for code, want := range nodePrintCases {
		t.Run("print/"+code, func(t *testing.T) {
			if out, exit := run(t, "", "-p", code, "z"); out != want || exit != 0 {
				t.Errorf("host node: code %d stdout %q; the table says %q", exit, out, want)
			}
		})
		confirmed++
	}
	for _, c := range nodeMiscCases {
		if c.vmOnly != "" || c.want == "" {
			continue
		}
		t.Run("misc/"+strings.Join(c.argv[1:], " "), func(t *testing.T) {
			if out, _ := run(t, c.stdin, c.argv[1:]...); out != c.want {
				t.Errorf("host node: stdout %q; the table says %q", trunc(out), trunc(c.want))
			}
		})
		confirmed++
	}
	// The tables must not drift into being mostly VM-only.
	if total := len(nodeEvalCases) + len(nodePrintCases) + len(nodeMiscCases); confirmed*3 < total*2 {
		t.Errorf("only %d of %d table rows are confirmed against host node", confirmed, total)
	}
}
