package js

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

func newEngine(t *testing.T, cfg Config) *Engine {
	t.Helper()
	e, err := NewEngine(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// Every limit ends in its typed result, and the next process of the same
// VM runs normally.
func TestLimits(t *testing.T) {
	e := newEngine(t, Config{TimeLimit: 500 * time.Millisecond, HeapLimitBytes: 32 << 20, ExternalLimitBytes: 64 << 20})
	v := newVM(t, e)
	// Memory limits are tested without a time limit, which a loaded
	// machine could otherwise reach first.
	mem := newVM(t, newEngine(t, Config{HeapLimitBytes: 32 << 20, ExternalLimitBytes: 64 << 20}))
	memCases := map[string]bool{"heap": true, "external": true, "externalSmall": true, "bufferAlloc": true}
	cases := []struct {
		name, code string
		wantCode   int
		wantErr    string
	}{
		{"busyLoop", `while (true) {}`, 124, "CPU time limit exceeded"},
		// TurboFan used to unroll this loop past TerminateExecution's
		// checks (--no-turboshaft-loop-unrolling keeps it stoppable).
		{"turbofanLoop", `(function(){ let x; while(1){ x = new Array(1e3).fill(0) } })()`, 124, "CPU time limit exceeded"},
		{"timerLoop", `setInterval(() => {}, 1)`, 124, "CPU time limit exceeded"},
		{"heap", `const a = []; while (true) a.push({x: new Array(64).fill(1.5), s: 'k' + a.length})`, 134, "heap out of memory"},
		{"external", `const a = []; while (true) a.push(new ArrayBuffer(4 << 20))`, 1, "RangeError: Array buffer allocation failed"},
		{"externalSmall", `const a = []; while (true) a.push(new Uint8Array(64 << 10))`, 1, "RangeError: Array buffer allocation failed"},
		{"bufferAlloc", `Buffer.alloc(1e9)`, 1, "RangeError"},
		{"recursion", `function f(n) { return f(n + 1) + 1 } f(0)`, 1, "RangeError: Maximum call stack size exceeded"},
		{"recursionViaBridge", `function f() { require('fs').existsSync('/'); return f() } f()`, 1, "RangeError: Maximum call stack size exceeded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := v
			if memCases[c.name] {
				v = mem
			}
			r := v.node(c.code)
			if r.code != c.wantCode || !strings.Contains(r.stderr, c.wantErr) {
				t.Errorf("code %d (want %d), stderr %q", r.code, c.wantCode, trunc(r.stderr))
			}
			// The VM is still usable.
			if r := v.node("console.log('ok')"); r.stdout != "ok\n" {
				t.Fatalf("next exec: %+v", r)
			}
		})
	}
	r := v.node(`function f() { return f() } try { f() } catch (e) { console.log(e instanceof RangeError) }`)
	if r.stdout != "true\n" {
		t.Errorf("caught recursion: %+v", r)
	}
}

func trunc(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}

// A node process blocked in JavaScript dies at once when killed.
func TestKill(t *testing.T) {
	v := newVM(t, nil)
	k := v.vm.Kernel
	outW, _ := collect(k, t)
	defer outW.DecRef()
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"node", "-e", "for(;;){}"}, Env: []string{"PATH=/usr/bin"}, Files: []vfs.File{nil, outW, outW}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := p.Signal(kernel.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := p.HostWait(ctx)
	if err != nil || st.Signal != kernel.SIGKILL {
		t.Fatalf("status %+v, %v", st, err)
	}
}

// Bridge calls release the V8 values they receive and return: 100k
// calls leave the context holding no more values than a few calls do.
func TestBridgeValuesReleased(t *testing.T) {
	e := newEngine(t, Config{})
	var retained atomic.Int64
	e.testHook = func(r *rt) { retained.Store(int64(r.v8c.RetainedValueCount())) }
	v := newVM(t, e)
	r := v.node(`const fs = require('fs'); for (let i = 0; i < 1000; i++) fs.existsSync('/tmp')`)
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	small := retained.Load()
	r = v.node(`const fs = require('fs'); let n = 0; for (let i = 0; i < 100000; i++) { fs.existsSync('/tmp'); n += process.cwd().length }`)
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	big := retained.Load()
	if big > small+64 {
		t.Fatalf("retained values grew from %d (1k calls) to %d (100k calls)", small, big)
	}
}

// The kernel's CPUTime limit counts the CPU time of the isolate's thread:
// a node process that waits on a timer outlives it, one that spins ends
// with SIGXCPU.
func TestNodeCPUTimeLimit(t *testing.T) {
	e := newEngine(t, Config{})
	m := stressVM(t, e, kernel.Limits{CPUTime: 300 * time.Millisecond})
	st, out, errOut, err := spawnNode(m.Kernel, `setTimeout(() => console.log('waited'), 700)`, false)
	if err != nil || !st.Exited || st.Code != 0 || out != "waited\n" {
		t.Fatalf("waiting process: %+v %q %q %v", st, out, errOut, err)
	}
	st, _, _, err = spawnNode(m.Kernel, `for (;;) {}`, false)
	if err != nil || st.Signal != kernel.SIGXCPU {
		t.Fatalf("spinning process: %+v %v", st, err)
	}
}
