package soak

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/secexec/secexec"
)

// opTimeout bounds one operation: a hung operation is a failure, not a
// hung soak.
const opTimeout = 2 * time.Minute

// recycleAfter is how many operations a worker's VM serves before it is
// closed and replaced.
const recycleAfter = 20

// vmLimits are the limits of the workers' VMs: low enough that the
// limit operations hit them quickly.
var vmLimits = secexec.Limits{CPUTime: time.Second, MemoryBytes: 64 << 20, FDsPerProcess: 128}

func newWorker(ctx context.Context, cfg Config) (*worker, error) {
	vm, err := secexec.NewVM(ctx, secexec.Options{
		Permissions: secexec.AllowAll(),
		Limits:      vmLimits,
		Mounts:      []secexec.Mount{{Path: "/workspace/node_modules", HostDir: cfg.NodeModules, ReadOnly: true}},
	})
	if err != nil {
		return nil, err
	}
	return &worker{vm: vm, execs: new(atomic.Int64)}, nil
}

func (w *worker) close() { _ = w.vm.Close() }

// exec runs a command line and checks its exit code and that its output
// holds want.
func (w *worker) exec(ctx context.Context, cmdline string, code int, want string) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	return w.check(w.vm.Exec(ctx, cmdline, nil))(code, want)
}

// node runs a node script like exec.
func (w *worker) node(ctx context.Context, script string, code int, want string) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	return w.check(w.vm.Run(ctx, []string{"node", "-e", script}, nil))(code, want)
}

func (w *worker) check(r *secexec.Result, err error) func(int, string) error {
	return func(code int, want string) error {
		if err != nil {
			return err
		}
		w.execs.Add(1)
		if r.ExitCode != code || !bytes.Contains(append(r.Stdout, r.Stderr...), []byte(want)) {
			return fmt.Errorf("exit %d (want %d), want %q; stdout %.200q stderr %.200q", r.ExitCode, code, want, r.Stdout, r.Stderr)
		}
		return nil
	}
}

// allOps is the load, in the order a worker runs it; the limit
// operations come once per round.
var allOps = []op{
	{"pipeline", func(ctx context.Context, w *worker) error { return w.exec(ctx, "echo hello | wc -c", 0, "6") }},
	{"npm", func(ctx context.Context, w *worker) error {
		return w.node(ctx, `const qs = require('qs'); console.log(JSON.stringify(qs.parse(qs.stringify({ a: { b: 'c' } }))))`, 0, `{"a":{"b":"c"}}`)
	}},
	{"pipeline-sort", func(ctx context.Context, w *worker) error {
		return w.exec(ctx, "seq 1 300 | grep 7 | sort -rn | head -n 2", 0, "297\n287\n")
	}},
	{"node-fs", func(ctx context.Context, w *worker) error {
		if err := w.node(ctx, `require('fs').writeFileSync('/tmp/soak', 'x'.repeat(1 << 16)); console.log('ok')`, 0, "ok"); err != nil {
			return err
		}
		return w.exec(ctx, "wc -c < /tmp/soak && rm /tmp/soak", 0, "65536")
	}},
	{"limit-cpu-node", func(ctx context.Context, w *worker) error {
		return w.node(ctx, `for (;;) {}`, 124, secexec.TimeLimitMessage)
	}},
	{"limit-cpu-wasm", func(ctx context.Context, w *worker) error {
		return w.exec(ctx, "yes > /dev/null", 124, secexec.TimeLimitMessage)
	}},
	{"limit-memory", func(ctx context.Context, w *worker) error {
		return w.node(ctx, `const a = []; for (;;) a.push(new Array(1e4).fill(1.5))`, 134, "heap out of memory")
	}},
	{"limit-fds", func(ctx context.Context, w *worker) error {
		return w.node(ctx, `const a = []; try { for (;;) a.push(require('fs').openSync('/dev/null', 'r')) } catch (e) { console.log(e.code) }`, 0, "EMFILE")
	}},
}

// plainOps and limitOps split allOps: a round is every plain operation
// and one limit operation, in turn.
var plainOps, limitOps = allOps[:4], allOps[4:]

func runWorker(ctx context.Context, cfg Config, id int, execs *atomic.Int64, record func(string, error)) {
	var w *worker
	defer func() {
		if w != nil {
			w.close()
		}
	}()
	for round := id; ctx.Err() == nil; round++ {
		if w == nil || w.ops >= recycleAfter {
			if w != nil {
				w.close()
				record("vm-close", nil)
			}
			var err error
			if w, err = newWorker(ctx, cfg); err != nil {
				if ctx.Err() == nil {
					record("vm-create", err)
				}
				w = nil
				// Fail slowly: the failure is recorded, spinning on it
				// would only load the machine.
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
				continue
			}
			w.execs = execs
			record("vm-create", nil)
		}
		for _, o := range append(plainOps[:len(plainOps):len(plainOps)], limitOps[round%len(limitOps)]) {
			err := o.run(ctx, w)
			if ctx.Err() != nil {
				return // the end of the run cut the operation short
			}
			w.ops++
			record(o.name, err)
		}
	}
}

// crashEngine creates a VM in an engine process of its own, kills that
// process with SIGKILL, checks that the VM reports the loss as
// ErrEngineLost, and that a new VM in a new engine works.
func crashEngine(ctx context.Context, p *probe, execs *atomic.Int64) error {
	before := map[int]bool{}
	kids, _ := p.children()
	for _, k := range kids {
		before[k.pid] = true
	}
	opts := secexec.Options{Engine: secexec.EnginePerVM, Permissions: secexec.AllowAll()}
	vm, err := secexec.NewVM(ctx, opts)
	if err != nil {
		return err
	}
	defer vm.Close()
	w := &worker{vm: vm, execs: execs}
	if err := w.exec(ctx, "echo up", 0, "up"); err != nil {
		return err
	}
	kids, _ = p.children()
	var pid int
	for _, k := range kids {
		if !before[k.pid] && !k.zombie {
			if pid != 0 {
				return errors.New("two new engine processes: cannot tell which is the VM's")
			}
			pid = k.pid
		}
	}
	if pid == 0 {
		return errors.New("no engine process of its own for an EnginePerVM VM")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	select {
	case <-vm.Done():
	case <-time.After(30 * time.Second):
		return errors.New("VM not done 30s after its engine was killed")
	}
	if _, err := vm.Exec(ctx, "echo", nil); !errors.Is(err, secexec.ErrEngineLost) {
		return fmt.Errorf("exec after the engine was killed: %v, want ErrEngineLost", err)
	}
	_ = vm.Close()
	next, err := secexec.NewVM(ctx, opts)
	if err != nil {
		return fmt.Errorf("recovering: %w", err)
	}
	defer next.Close()
	return (&worker{vm: next, execs: execs}).exec(ctx, "echo again", 0, "again")
}
