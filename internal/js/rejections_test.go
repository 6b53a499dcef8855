package js

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Node's default mode ('throw'): a rejection nobody handles by the end of
// the macrotask is an uncaught error, unless 'unhandledRejection' takes it.
func TestUnhandledRejections(t *testing.T) {
	v := newVM(t, nil)
	cases := []struct {
		name, code string
		exit       int
		stdout     string
		stderr     []string // substrings
	}{
		{"error", `Promise.reject(new Error('boom'))`, 1, "",
			[]string{"[eval]:1\nPromise.reject(new Error('boom'))\n               ^\n", "Error: boom\n    at ", "[eval]:1:16)", "Node.js v22"}},
		{"async function", `async function f() { throw new TypeError('t') } f()`, 1, "",
			[]string{"TypeError: t\n    at f ([eval]:1:28)"}},
		{"non-error reason", `Promise.reject(42)`, 1, "",
			[]string{`UnhandledPromiseRejection: This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason "42".`, "code: 'ERR_UNHANDLED_REJECTION'"}},
		{"object reason", `Promise.reject({ a: 1 })`, 1, "", []string{`the reason "#<Object>".`}},
		{"listener takes it", `process.on('unhandledRejection', (r, p) => console.log('got', r, p instanceof Promise)); Promise.reject(1)`, 0, "got 1 true\n", nil},
		{"handled in the same tick", `const p = Promise.reject(new Error('x')); p.catch(() => console.log('caught'))`, 0, "caught\n", nil},
		{"handled by a later microtask", `const p = Promise.reject(new Error('x')); Promise.resolve().then(() => Promise.resolve()).then(() => p.catch(() => console.log('caught')))`, 0, "caught\n", nil},
		{"handled in a later macrotask is too late", `const p = Promise.reject(new Error('late')); setTimeout(() => p.catch(() => console.log('caught')), 0)`, 1, "", []string{"Error: late"}},
		{"rejectionHandled", `process.on('rejectionHandled', () => console.log('rh')); process.on('unhandledRejection', () => console.log('ur')); const p = Promise.reject(1); setTimeout(() => p.catch(() => {}), 10)`, 0, "ur\nrh\n", nil},
		{"uncaughtException origin", `process.on('uncaughtException', (e, o) => console.log('ue', e.message, o)); Promise.reject(new Error('q'))`, 0, "ue q unhandledRejection\n", nil},
		{"rejection from a timer", `setTimeout(() => { Promise.reject(new RangeError('in timer')) }, 1); setTimeout(() => console.log('not reached'), 50)`, 1, "", []string{"RangeError: in timer"}},
		{"await in a chain", `(async () => { await null; await new Promise(r => setTimeout(r, 1)); throw new Error('deep') })()`, 1, "", []string{"Error: deep"}},
		{"exit code of a handled one stays 0", `Promise.reject(new Error('x')).catch(() => {}); console.log('ok')`, 0, "ok\n", nil},
		{"listener that throws", `process.on('unhandledRejection', () => { throw new Error('from listener') }); Promise.reject(1)`, 1, "", []string{"Error: from listener"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := v.node(c.code)
			if r.code != c.exit || r.stdout != c.stdout {
				t.Fatalf("exit %d stdout %q, want %d %q; stderr:\n%s", r.code, r.stdout, c.exit, c.stdout, r.stderr)
			}
			for _, s := range c.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			if len(c.stderr) == 0 && r.stderr != "" {
				t.Errorf("unexpected stderr:\n%s", r.stderr)
			}
		})
	}
}

// A guest that rejects promises without end, or from deep recursion, or
// that replaces the builtins the hook uses, cannot crash the host: the
// process ends with its limits, and the next process in the VM runs.
func TestUnhandledRejectionsHostile(t *testing.T) {
	v := newVM(t, nil)
	cases := []struct{ name, code string }{
		{"replaced builtins", `WeakMap.prototype.set = () => { throw new Error('hijack') }; Array.prototype.push = null; Promise.reject(new Error('still seen'))`},
		{"deep recursion", `function f(n) { Promise.reject(new Error('r' + n)).catch(() => {}); return f(n + 1) } try { f(0) } catch (e) { console.log(e.constructor.name) } Promise.reject(new Error('after'))`},
		{"many", `for (let i = 0; i < 100000; i++) Promise.reject(i).catch(() => {}); Promise.reject(new Error('last'))`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := v.node(c.code)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1; stdout %q stderr:\n%s", r.code, r.stdout, trunc(r.stderr))
			}
		})
	}
	if r := v.node(`console.log('next')`); r.stdout != "next\n" {
		t.Fatalf("next process: %+v", r)
	}
}

// Limits cross the hook: a guest rejecting promises in an endless loop is
// stopped by the time or heap limit, or by the hook's own bound on the
// rejections it records (reported as out of memory); it never crashes V8,
// and the VM's next process runs. Many rejections handled together later
// are not counted against the bound.
func TestUnhandledRejectionsLimits(t *testing.T) {
	e := newEngine(t, Config{TimeLimit: 500 * time.Millisecond, HeapLimitBytes: 32 << 20})
	v := newVM(t, e)
	for _, code := range []string{
		`for (;;) Promise.reject(1)`,
		`process.on('unhandledRejection', () => {}); for (;;) Promise.reject(1)`,
		`process.on('unhandledRejection', () => { for (;;) Promise.reject(2) }); Promise.reject(1)`,
		`const a = []; for (;;) a.push(Promise.reject(1))`,
		`(function f() { Promise.reject(new Error('x')); setTimeout(f, 0) })(); process.on('unhandledRejection', () => {})`,
	} {
		r := v.node(code)
		if r.code != 124 && r.code != 134 {
			t.Errorf("%s: exit %d, want 124 or 134; stderr %s", code, r.code, trunc(r.stderr))
		}
		if r := v.node(`console.log('next')`); r.stdout != "next\n" {
			t.Fatalf("next process: %+v", r)
		}
	}

	// No time limit: the bound ends an endless loop of rejections.
	e = newEngine(t, Config{HeapLimitBytes: 64 << 20})
	e.maxRejections = 50000
	v = newVM(t, e)
	for _, code := range []string{
		`for (;;) Promise.reject(1)`,
		`process.on('unhandledRejection', () => {}); for (;;) Promise.reject(1)`,
	} {
		r := v.node(code)
		if r.code != 134 || !strings.Contains(r.stderr, "heap out of memory") {
			t.Errorf("%s: exit %d, want 134; stderr %s", code, r.code, trunc(r.stderr))
		}
	}
	r := v.node(`const ps = []; for (let i = 0; i < 40000; i++) ps.push(Promise.reject(i)); Promise.allSettled(ps).then(r => console.log(r.length))
const qs = []; for (let i = 0; i < 40000; i++) { const p = Promise.reject(i); p.catch(() => {}); }
setTimeout(() => { for (let i = 0; i < 40000; i++) qs.push(Promise.reject(i)); Promise.all(qs.map(q => q.catch(() => 1))).then(v => console.log(v.length)) }, 0)`)
	if r.code != 0 || r.stdout != "40000\n40000\n" {
		t.Errorf("handled rejections: %+v", r)
	}
}

// The shims declare the V8 API they call in v8_mirror.h instead of
// including V8's headers (which live in the v8go module, out of reach of
// this package's cgo flags). This test compiles the layouts it relies on against the real
// headers of the pinned v8go, so an upgrade that changes them fails here
// instead of corrupting memory.
func TestRejectShimMatchesV8Headers(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		if cxx, err = exec.LookPath("c++"); err != nil {
			t.Fatal("no C++ compiler (cgo needs one to build this package)")
		}
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/tommie/v8go").Output()
	if err != nil {
		t.Fatalf("locating v8go: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	if !rejectHookUsable {
		t.Fatal("v8go's Value no longer starts with its handle pointer")
	}
	src := `
#include <cstddef>
#include <type_traits>
#include "v8.h"
#include "value.h"
static_assert(sizeof(v8::Local<v8::Value>) == sizeof(void*), "Local is one pointer");
static_assert(std::is_trivially_copyable<v8::Local<v8::Value>>::value, "Local passes in a register");
static_assert(sizeof(v8::PromiseRejectMessage) == 3 * sizeof(void*), "PromiseRejectMessage layout");
static_assert(std::is_trivially_copyable<v8::PromiseRejectMessage>::value, "PromiseRejectMessage passes by value");
static_assert(v8::kPromiseRejectWithNoHandler == 0 && v8::kPromiseHandlerAddedAfterReject == 1, "event values");
static_assert(offsetof(m_value, iso) == sizeof(long), "m_value.iso");
static_assert(offsetof(m_value, ptr) == sizeof(long) + 2 * sizeof(void*), "m_value.ptr");
static_assert(sizeof(v8::Global<v8::Value>) == sizeof(void*), "Global is one slot pointer");
static_assert(std::is_trivially_copyable<v8::Maybe<bool>>::value && sizeof(v8::Maybe<bool>) == 2, "Maybe<bool> returns in a register");
using CreateFn = v8::Maybe<bool> (v8::Object::*)(v8::Local<v8::Context>, uint32_t, v8::Local<v8::Value>);
static_assert(std::is_same<decltype(static_cast<CreateFn>(&v8::Object::CreateDataProperty)), CreateFn>::value, "CreateDataProperty");
static_assert(std::is_same<decltype(&v8::Object::GetIdentityHash), int (v8::Object::*)()>::value, "GetIdentityHash");
static_assert(std::is_same<decltype(&v8::api_internal::GlobalizeReference), v8::internal::Address* (*)(v8::internal::Isolate*, v8::internal::Address)>::value, "GlobalizeReference");
static_assert(std::is_same<decltype(&v8::api_internal::DisposeGlobal), void (*)(v8::internal::Address*)>::value, "DisposeGlobal");
static_assert(std::is_same<decltype(&v8::Isolate::TerminateExecution), void (v8::Isolate::*)()>::value, "TerminateExecution");
using SetCb = void (v8::Isolate::*)(v8::PromiseRejectCallback);
static_assert(std::is_same<decltype(static_cast<SetCb>(&v8::Isolate::SetPromiseRejectCallback)), SetCb>::value, "SetPromiseRejectCallback");
// dynimport_shim.cc
static_assert(sizeof(v8::MaybeLocal<v8::Promise>) == sizeof(void*), "MaybeLocal is one pointer");
static_assert(std::is_trivially_copyable<v8::MaybeLocal<v8::Promise>>::value, "MaybeLocal returns in a register");
using ImportCb = v8::MaybeLocal<v8::Promise> (*)(v8::Local<v8::Context>, v8::Local<v8::Data>, v8::Local<v8::Value>, v8::Local<v8::String>, v8::Local<v8::FixedArray>);
static_assert(std::is_same<v8::HostImportModuleDynamicallyCallback, ImportCb>::value, "HostImportModuleDynamicallyCallback");
using SetImport = void (v8::Isolate::*)(v8::HostImportModuleDynamicallyCallback);
static_assert(std::is_same<decltype(static_cast<SetImport>(&v8::Isolate::SetHostImportModuleDynamicallyCallback)), SetImport>::value, "SetHostImportModuleDynamicallyCallback");
using CallFn = v8::MaybeLocal<v8::Value> (v8::Function::*)(v8::Local<v8::Context>, v8::Local<v8::Value>, int, v8::Local<v8::Value>[]);
static_assert(std::is_same<decltype(static_cast<CallFn>(&v8::Function::Call)), CallFn>::value, "Function::Call");
// asyncctx_shim.cc
static_assert(std::is_same<decltype(&v8::Isolate::GetContinuationPreservedEmbedderData), v8::Local<v8::Value> (v8::Isolate::*)()>::value, "GetContinuationPreservedEmbedderData");
static_assert(std::is_same<decltype(&v8::Isolate::SetContinuationPreservedEmbedderData), void (v8::Isolate::*)(v8::Local<v8::Value>)>::value, "SetContinuationPreservedEmbedderData");
using HookFn = void (*)(v8::PromiseHookType, v8::Local<v8::Promise>, v8::Local<v8::Value>);
static_assert(std::is_same<v8::PromiseHook, HookFn>::value, "PromiseHook");
static_assert(static_cast<int>(v8::PromiseHookType::kInit) == 0 && static_cast<int>(v8::PromiseHookType::kResolve) == 1 &&
              static_cast<int>(v8::PromiseHookType::kBefore) == 2 && static_cast<int>(v8::PromiseHookType::kAfter) == 3, "PromiseHookType values");
using SetHook = void (v8::Isolate::*)(v8::PromiseHook);
static_assert(std::is_same<decltype(static_cast<SetHook>(&v8::Isolate::SetPromiseHook)), SetHook>::value, "SetPromiseHook");
int main() { return 0; }
`
	f := filepath.Join(t.TempDir(), "layout.cc")
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cxx, "-std=c++20", "-fsyntax-only",
		"-DV8_COMPRESS_POINTERS", "-DV8_31BIT_SMIS_ON_64BIT_ARCH", "-DV8_ENABLE_SANDBOX",
		"-I", filepath.Join(dir, "deps", "include"), "-I", dir, f)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the shim's view of V8 does not match the headers: %v\n%s", err, msg)
	}
}
