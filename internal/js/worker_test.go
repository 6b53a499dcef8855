package js

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// worker_threads: behaviour (as Node's), then the attacks: too many
// workers, floods of messages, busy workers, leaks, crashes.

// TestWorkerDifferential runs the probes of testdata/workers under Node
// 22 and under secexec and compares their output and exit codes.
func TestWorkerDifferential(t *testing.T) {
	node := node22(t)
	probes, err := filepath.Glob("testdata/workers/*.js")
	if err != nil || len(probes) == 0 {
		t.Fatalf("no probes: %v", err)
	}
	v := newVM(t, nil)
	for _, probe := range probes {
		name := filepath.Base(probe)
		t.Run(strings.TrimSuffix(name, ".js"), func(t *testing.T) {
			src, err := os.ReadFile(probe)
			if err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			hostFile := filepath.Join(tmp, name)
			if err := os.WriteFile(hostFile, src, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(node, hostFile)
			cmd.Dir = tmp
			cmd.Env = []string{"HOME=" + tmp}
			var hostOut, hostErr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &hostOut, &hostErr
			hostCode := 0
			if err := cmd.Run(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatal(err)
				}
				hostCode = ee.ExitCode()
			}
			v.writeFile("/workspace/"+name, string(src))
			r := v.run("", "node", name)
			if r.code != hostCode || r.stdout != hostOut.String() {
				t.Errorf("exit %d vs host %d\n--- secexec stdout\n%s\n--- host stdout\n%s\n--- secexec stderr\n%s\n--- host stderr\n%s",
					r.code, hostCode, r.stdout, hostOut.String(), trunc(r.stderr), hostErr.String())
			}
		})
	}
}

// A worker out of memory ends alone, with ERR_WORKER_OUT_OF_MEMORY.
func TestWorkerOutOfMemory(t *testing.T) {
	v := newVM(t, nil)
	res := v.node(`
const { Worker } = require('worker_threads');
const w = new Worker('const a = []; for (;;) a.push({ x: new Array(1000).fill(1) })', { eval: true, resourceLimits: { maxOldGenerationSizeMb: 16 } });
w.on('error', (e) => console.log(e.code, e.message));
w.on('exit', (c) => console.log('exit', c));
`)
	want := "ERR_WORKER_OUT_OF_MEMORY Worker terminated due to reaching memory limit: JS heap out of memory\nexit 1\n"
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", res.code, res.stdout, want, res.stderr)
	}
}

// Attack: more workers than the cap, in one process and across the VM's
// processes. The extra ones are refused with a clear error; the others
// keep running.
func TestWorkerCapPerProcessAndVM(t *testing.T) {
	v := newVM(t, nil)
	// many.js makes argv[2] workers, says how many it could, and holds
	// them until its stdin ends.
	v.writeFile("/workspace/many.js", `
const { Worker } = require('worker_threads');
const n = Number(process.argv[2]);
const ws = [];
let refused = '';
for (let i = 0; i < n; i++) {
  try {
    ws.push(new Worker('require("worker_threads").parentPort.on("message", () => process.exit(0))', { eval: true }));
  } catch (e) { refused = e.code + ': ' + e.message; break; }
}
console.log(ws.length, refused);
process.stdin.on('data', () => {});
process.stdin.on('end', () => { for (const w of ws) w.postMessage('go'); });
`)
	res := v.run("", "node", "many.js", "70")
	want := fmt.Sprintf("%d ERR_WORKER_INIT_FAILED: Worker initialization failure: too many workers in this process (at most %d)\n", maxWorkersPerProcess, maxWorkersPerProcess)
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\nstdout:\n%q\nwant:\n%q\nstderr:\n%s", res.code, res.stdout, want, res.stderr)
	}
	// Two processes of one VM: the second finds the VM's budget spent
	// while the first holds its workers.
	both := v.node(`
const { spawn } = require('child_process');
const a = spawn('node', ['many.js', '40']);
a.stdout.once('data', (first) => {
  const b = spawn('node', ['many.js', '40']);
  b.stdin.end();
  let out = '';
  b.stdout.on('data', (d) => { out += d; });
  b.on('exit', (code) => {
    console.log('first', String(first).trim());
    console.log('second', out.trim(), code);
    a.stdin.end();
  });
});
`)
	want = fmt.Sprintf("first 40\nsecond %d ERR_WORKER_INIT_FAILED: Worker initialization failure: too many workers in this VM (at most %d) 0\n", maxWorkersPerVM-40, maxWorkersPerVM)
	if both.code != 0 || both.stdout != want {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", both.code, both.stdout, want, both.stderr)
	}
}

// Attack: flooding a port that is never read. The queue is bounded: the
// sender gets a clear error, host memory does not grow without bound.
func TestWorkerMessageFloodIsBounded(t *testing.T) {
	v := newVM(t, nil)
	res := v.node(`
const { Worker, MessageChannel } = require('worker_threads');
const { port1, port2 } = new MessageChannel();
// port1 is never started: what the worker posts stays queued.
const w = new Worker(` + "`" + `
  const { workerData: { port } } = require('worker_threads');
  const buf = new Uint8Array(1 << 20);
  let n = 0;
  try { for (;;) { port.postMessage(buf); n++; } } catch (e) { console.log(e.code, e.name, n > 0 && n <= 128); }
` + "`" + `, { eval: true, workerData: { port: port2 }, transferList: [port2] });
w.on('exit', (c) => {
  console.log('exit', c);
  port1.close();
  // Within one thread too.
  const c2 = new MessageChannel();
  let m = 0;
  try { for (;;) { c2.port1.postMessage('x'.repeat(1 << 20)); m++; } } catch (e) { console.log(e.code, m <= 128); }
  c2.port1.close();
});
`)
	want := "ERR_WORKER_MESSAGE_QUEUE_FULL RangeError true\nexit 0\nERR_WORKER_MESSAGE_QUEUE_FULL true\n"
	if res.code != 0 || res.stdout != want {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", res.code, res.stdout, want, res.stderr)
	}
}

// Attack: workers left running when their process exits, is killed, or
// its VM is closed. Every isolate is disposed of and every thread ends.
func TestWorkerNoLeak(t *testing.T) {
	e, err := NewEngine(context.Background(), Config{WarmIsolates: -1})
	if err != nil {
		t.Fatal(err)
	}
	goroutines := runtime.NumGoroutine()
	v := newVM(t, e)
	// process.exit() with busy and idle workers, and a nested one.
	res := v.node(`
const { Worker } = require('worker_threads');
const busy = 'require("worker_threads").parentPort.postMessage("up"); for (;;) {}';
let up = 0;
for (let i = 0; i < 3; i++) new Worker(busy, { eval: true }).on('message', () => { if (++up === 4) process.exit(5); });
new Worker('new (require("worker_threads").Worker)(' + JSON.stringify(busy) + ', { eval: true }).on("message", (m) => require("worker_threads").parentPort.postMessage(m)); setInterval(() => {}, 1000)', { eval: true }).on('message', () => { if (++up === 4) process.exit(5); });
`)
	if res.code != 5 {
		t.Fatalf("exit %d, stderr:\n%s", res.code, res.stderr)
	}

	// A VM closed while a process's workers run.
	m, err := vm.New(context.Background(), vm.Config{Policy: policy.AllowAll(), Lowers: []vfs.FileSystem{e.Layer()}})
	if err != nil {
		t.Fatal(err)
	}
	m.Kernel.RegisterLoader(e.Loader())
	r, w, err := m.Kernel.NewPipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Kernel.SpawnHost(context.Background(), kernel.SpawnOptions{
		Argv: []string{"node", "-e", `
const { Worker } = require('worker_threads');
let up = 0;
for (let i = 0; i < 4; i++) new Worker('require("worker_threads").parentPort.postMessage(1); for (;;) {}', { eval: true }).on('message', () => { if (++up === 4) console.log('ready'); });
`}, Cwd: "/", Files: []vfs.File{nil, w, w},
	})
	w.DecRef()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := r.Read(context.Background(), buf)
	if string(buf[:n]) != "ready\n" {
		t.Fatalf("got %q", buf[:n])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.HostWait(ctx); err != nil {
		t.Fatal(err)
	}
	r.DecRef()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if live := e.Stats().LiveIsolates; live != 0 {
		t.Fatalf("%d isolates still live", live)
	}
	e.vmWorkers.mu.Lock()
	counted := len(e.vmWorkers.n)
	e.vmWorkers.mu.Unlock()
	if counted != 0 {
		t.Fatalf("worker counts of %d VMs remain", counted)
	}
	// Threads end with their isolates; allow the runtime's own to settle.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > goroutines+8 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > goroutines+8 {
		t.Fatalf("%d goroutines, %d before", g, goroutines)
	}
}

// A worker's CPU time is its process's: a busy worker ends the process
// at the VM's CPU limit as a busy main thread does.
func TestWorkerCPUTimeCounts(t *testing.T) {
	v := newConfiguredVM(t, engine(t), vm.Config{Limits: kernel.Limits{CPUTime: 300 * time.Millisecond}})
	res := v.node(`
const { Worker } = require('worker_threads');
new Worker('for (;;) {}', { eval: true });
setInterval(() => {}, 1000);
`)
	if res.status.Signal != kernel.SIGXCPU {
		t.Fatalf("status %+v, stderr:\n%s", res.status, res.stderr)
	}
}
