package js

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// addWasm is a WebAssembly module exporting add(i32, i32) i32.
const addWasm = `new Uint8Array([0,97,115,109,1,0,0,0, 1,7,1,96,2,127,127,1,127, 3,2,1,0, 7,7,1,3,97,100,100,0,0, 10,9,1,7,0,32,0,32,1,106,11])`

// stressJob is one kind of process the stress test runs.
type stressJob struct {
	name string
	// vm picks the VM the process runs in.
	vm   func(s *stressVMs, i int) *vm.VM
	code func(i int) string
	// kill sends SIGKILL as soon as the process is spawned.
	kill  bool
	check func(i int, st kernel.WaitStatus, stdout, stderr string) error
}

type stressVMs struct {
	plain []*vm.VM // no limits of their own: pooled isolates
	spin  *vm.VM   // a small CPUTime (SIGXCPU)
	heap  *vm.VM   // a small MemoryBytes: lazy isolates with a small heap
}

func exited(code int, stdout string) func(int, kernel.WaitStatus, string, string) error {
	return func(_ int, st kernel.WaitStatus, out, errOut string) error {
		if !st.Exited || st.Code != code || out != stdout {
			return fmt.Errorf("status %+v stdout %q (want exit %d, %q), stderr %q", st, out, code, stdout, trunc(errOut))
		}
		return nil
	}
}

func signalled(sig kernel.Signal) func(int, kernel.WaitStatus, string, string) error {
	return func(_ int, st kernel.WaitStatus, out, errOut string) error {
		if st.Exited || st.Signal != sig {
			return fmt.Errorf("status %+v (want signal %v), stdout %q, stderr %q", st, sig, out, trunc(errOut))
		}
		return nil
	}
}

var stressJobs = []stressJob{
	{
		name: "wasmSync",
		vm:   func(s *stressVMs, i int) *vm.VM { return s.plain[i%len(s.plain)] },
		code: func(i int) string {
			return `const inst = new WebAssembly.Instance(new WebAssembly.Module(` + addWasm + `));
let big; try { new WebAssembly.Memory({initial: 5000}); big = 'grown' } catch (e) { big = e instanceof RangeError }
console.log(inst.exports.add(` + strconv.Itoa(i) + `, 1), big)`
		},
		check: func(i int, st kernel.WaitStatus, out, errOut string) error {
			return exited(0, strconv.Itoa(i+1)+" true\n")(i, st, out, errOut)
		},
	},
	{
		name: "wasmAsync",
		vm:   func(s *stressVMs, i int) *vm.VM { return s.plain[i%len(s.plain)] },
		code: func(i int) string {
			return `WebAssembly.instantiate(` + addWasm + `).then(({instance}) =>
  setTimeout(() => console.log(instance.exports.add(` + strconv.Itoa(i) + `, 2)), 0))`
		},
		check: func(i int, st kernel.WaitStatus, out, errOut string) error {
			return exited(0, strconv.Itoa(i+2)+"\n")(i, st, out, errOut)
		},
	},
	{
		name:  "cpuTime",
		vm:    func(s *stressVMs, i int) *vm.VM { return s.spin },
		code:  func(int) string { return `for (;;) {}` },
		check: signalled(kernel.SIGXCPU),
	},
	{
		name: "sigkill",
		vm:   func(s *stressVMs, i int) *vm.VM { return s.plain[i%len(s.plain)] },
		code: func(int) string {
			return `const m = new WebAssembly.Module(` + addWasm + `); for (;;) new WebAssembly.Instance(m)`
		},
		kill:  true,
		check: signalled(kernel.SIGKILL),
	},
	{
		name: "heap",
		vm:   func(s *stressVMs, i int) *vm.VM { return s.heap },
		code: func(int) string {
			return `const a = []; while (true) a.push({x: new Array(64).fill(1.5), s: 'k' + a.length})`
		},
		check: func(i int, st kernel.WaitStatus, out, errOut string) error {
			if !st.Exited || st.Code != 134 || !strings.Contains(errOut, "heap out of memory") {
				return fmt.Errorf("status %+v (want exit 134), stderr %q", st, trunc(errOut))
			}
			return nil
		},
	},
}

// stressMix says how many of every twenty processes are of each kind:
// mostly WebAssembly programs that finish, the rest terminated for
// limits. Heap exhaustion costs the most CPU (garbage collections up to
// the limit), so it is the rarest.
var stressMix = []int{0, 1, 3, 0, 1, 2, 0, 1, 3, 0, 1, 3, 0, 1, 2, 0, 1, 3, 4, 3}

// stressProcs is how many processes TestStress runs: fewer under the
// race detector, which slows the Go side (kernel, bridge, loop) several
// times over, and with -short.
func stressProcs() int {
	if testing.Short() {
		return 300
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return 1000
			}
		}
	}
	return 2000
}

// TestStress runs thousands of node processes from concurrent
// goroutines, mixing WebAssembly programs with processes ended by their
// CPU time, by SIGKILL (often before their isolate is even claimed) and
// by their heap limit, while the pool boots isolates and runtimes are
// disposed in the background, and while other engines are created and
// closed with parked isolates. Every process must end in its expected
// status class, none with an internal error, and the engine must keep
// working afterwards.
func TestStress(t *testing.T) {
	e := newEngine(t, Config{WarmIsolates: 2})
	s := &stressVMs{
		plain: []*vm.VM{stressVM(t, e, kernel.Limits{}), stressVM(t, e, kernel.Limits{})},
		spin:  stressVM(t, e, kernel.Limits{CPUTime: 20 * time.Millisecond}),
		heap:  stressVM(t, e, kernel.Limits{MemoryBytes: minHeapLimit}),
	}

	var (
		next     atomic.Int64
		failures atomic.Int64
		counts   [5]atomic.Int64
		wall     [5]atomic.Int64
	)
	done := make(chan struct{})
	var churn sync.WaitGroup
	churn.Go(func() { engineChurn(t, done) })

	procs := stressProcs()
	const workers = 8
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= procs {
					return
				}
				kind := stressMix[i%len(stressMix)]
				j := stressJobs[kind]
				t0 := time.Now()
				st, out, errOut, err := spawnNode(j.vm(s, i).Kernel, j.code(i), j.kill)
				wall[kind].Add(int64(time.Since(t0)))
				if err == nil {
					err = j.check(i, st, out, errOut)
				}
				counts[kind].Add(1)
				if err != nil && failures.Add(1) <= 10 {
					t.Errorf("process %d (%s): %v", i, j.name, err)
				}
			}
		})
	}
	wg.Wait()
	close(done)
	churn.Wait()
	for k, j := range stressJobs {
		t.Logf("%s: %d processes, %v wall in all", j.name, counts[k].Load(), time.Duration(wall[k].Load()))
	}
	st := e.Stats()
	t.Logf("pool: %+v", st)
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d of %d processes ended wrongly", n, procs)
	}

	// The engine still works, its pool refills, and warm processes run.
	waitPoolFull(t, e)
	for i, j := range stressJobs[:2] {
		st, out, errOut, err := spawnNode(s.plain[0].Kernel, j.code(i), false)
		if err == nil {
			err = j.check(i, st, out, errOut)
		}
		if err != nil {
			t.Fatalf("after the stress, %s: %v", j.name, err)
		}
	}
	if after := e.Stats(); after.PoolHits <= st.PoolHits {
		t.Errorf("no pool hit after the stress: %+v then %+v", st, after)
	}
}

// engineChurn creates engines, runs a process in each, and closes them
// (disposing their parked isolates) until done.
func engineChurn(t *testing.T, done <-chan struct{}) {
	for n := 0; n < 20; n++ {
		select {
		case <-done:
			return
		default:
		}
		e, err := NewEngine(context.Background(), Config{WarmIsolates: 2})
		if err != nil {
			t.Errorf("churn engine: %v", err)
			return
		}
		m, err := newStressVM(e, kernel.Limits{})
		if err != nil {
			t.Errorf("churn vm: %v", err)
			e.Close()
			return
		}
		j := stressJobs[0]
		st, out, errOut, err := spawnNode(m.Kernel, j.code(n), false)
		if err == nil {
			err = j.check(n, st, out, errOut)
		}
		if err != nil {
			t.Errorf("churn process: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := m.Close(ctx); err != nil {
			t.Errorf("churn vm close: %v", err)
		}
		cancel()
		if err := e.Close(); err != nil {
			t.Errorf("churn engine close: %v", err)
		}
	}
}

func newStressVM(e *Engine, lim kernel.Limits) (*vm.VM, error) {
	m, err := vm.New(context.Background(), vm.Config{
		Policy: policy.AllowAll(),
		Lowers: []vfs.FileSystem{e.Layer()},
		Limits: lim,
	})
	if err != nil {
		return nil, err
	}
	m.Kernel.RegisterLoader(e.Loader())
	return m, nil
}

func stressVM(t *testing.T, e *Engine, lim kernel.Limits) *vm.VM {
	t.Helper()
	m, err := newStressVM(e, lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("vm close: %v", err)
		}
	})
	return m
}

// spawnNode runs node -e code in k, with SIGKILL sent right after the
// spawn when kill is set, and returns its status and output. Unlike the
// testVM helpers it is safe to call from any goroutine.
func spawnNode(k *kernel.Kernel, code string, kill bool) (st kernel.WaitStatus, stdout, stderr string, err error) {
	outR, outW, err := k.NewPipe()
	if err != nil {
		return st, "", "", err
	}
	errR, errW, err := k.NewPipe()
	if err != nil {
		outR.DecRef()
		outW.DecRef()
		return st, "", "", err
	}
	var outB, errB bytes.Buffer
	var readers sync.WaitGroup
	drain := func(r vfs.File, buf *bytes.Buffer) {
		defer r.DecRef()
		b := make([]byte, 4<<10)
		for {
			n, err := r.Read(context.Background(), b)
			buf.Write(b[:n])
			if n == 0 || err != nil {
				return
			}
		}
	}
	readers.Go(func() { drain(outR, &outB) })
	readers.Go(func() { drain(errR, &errB) })
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{
		Argv: []string{"node", "-e", code}, Env: []string{"PATH=/usr/bin"}, Cwd: "/",
		Files: []vfs.File{nil, outW, errW},
	})
	outW.DecRef()
	errW.DecRef()
	if err != nil {
		readers.Wait()
		return st, "", "", fmt.Errorf("spawn: %w", err)
	}
	if kill {
		if err := p.Signal(kernel.SIGKILL); err != nil && !errors.Is(err, context.Canceled) {
			return st, "", "", fmt.Errorf("kill: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err = p.HostWait(ctx)
	if err != nil {
		return st, "", "", fmt.Errorf("wait: %w", err)
	}
	readers.Wait()
	return st, outB.String(), errB.String(), nil
}

// WebAssembly.compile and instantiate settle (v8go never pumps the task
// queue V8's asynchronous compilation reports to; the bootstrap compiles
// synchronously behind the promise API), and reject as V8 does.
func TestWebAssemblyPromises(t *testing.T) {
	v := newVM(t, nil)
	cases := []struct{ name, code, want string }{
		{"instantiateBytes", `WebAssembly.instantiate(` + addWasm + `).then(r => console.log(Object.keys(r).join(), r.module instanceof WebAssembly.Module, r.instance.exports.add(2, 3)))`, "module,instance true 5\n"},
		{"compileThenInstantiate", `WebAssembly.compile(` + addWasm + `).then(m => WebAssembly.instantiate(m)).then(i => console.log(i instanceof WebAssembly.Instance, i.exports.add(1, 1)))`, "true 2\n"},
		{"await", `(async () => { const { instance } = await WebAssembly.instantiate(` + addWasm + `); console.log(instance.exports.add(40, 2)) })()`, "42\n"},
		{"compileError", `WebAssembly.compile(new Uint8Array([1, 2, 3])).catch(e => console.log(e instanceof WebAssembly.CompileError))`, "true\n"},
		{"typeError", `WebAssembly.instantiate(5).catch(e => console.log(e instanceof TypeError))`, "true\n"},
		{"linkError", `WebAssembly.instantiate(new Uint8Array([0,97,115,109,1,0,0,0, 1,4,1,96,0,0, 2,7,1,1,109,1,102,0,0]), {m: {f: 1}}).catch(e => console.log(e instanceof WebAssembly.LinkError))`, "true\n"},
		{"settlesAfterSync", `WebAssembly.compile(` + addWasm + `).then(() => console.log('b')); console.log('a')`, "a\nb\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if r := v.node(c.code); r.code != 0 || r.stdout != c.want || r.stderr != "" {
				t.Errorf("%+v, want stdout %q", r, c.want)
			}
		})
	}
}
