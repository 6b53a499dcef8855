package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/secexec/secexec"
)

// The memory rows hold VMs (or live node processes) in this process,
// with the in-process engine, and divide the growth of the resident set
// by their number: that is what a host pays per sandbox, V8 and Go heap
// included.

// maxHeldVMs and maxHeldIsolates cap how many the memory rows hold, so a
// large N does not exhaust the machine.
const (
	maxHeldVMs      = 50
	maxHeldIsolates = 10
)

// RSS returns the resident set size of process pid (0 means this one)
// from /proc/PID/status, in bytes.
func RSS(pid int) (int64, error) {
	name := "/proc/self/status"
	if pid > 0 {
		name = "/proc/" + strconv.Itoa(pid) + "/status"
	}
	f, err := os.Open(name)
	if err != nil {
		return 0, fmt.Errorf("bench: reading the resident set size: %w", err)
	}
	defer f.Close()
	return parseVmRSS(io.LimitReader(f, 64<<10))
}

// ErrNoRSS is returned when a status file has no VmRSS line.
var ErrNoRSS = errors.New("bench: no VmRSS in /proc status")

// parseVmRSS reads the "VmRSS: N kB" line of a /proc/PID/status file.
func parseVmRSS(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("%w: malformed line", ErrNoRSS)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 || kb > 1<<40 {
			return 0, fmt.Errorf("%w: bad value", ErrNoRSS)
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, ErrNoRSS
}

// settledRSS collects garbage first so that the figure counts what is
// held, not what is waiting to be freed.
func settledRSS() (int64, error) {
	debug.FreeOSMemory()
	return RSS(0)
}

func (r *runner) memIdleVMs(ctx context.Context, row Row) (Row, error) {
	row.Unit, row.Note = UnitMiB, "in process"
	n := min(r.cfg.N, maxHeldVMs)
	// Warm up: the first VM starts the process's guest runtime, which is
	// paid once, not per VM.
	warm, err := secexec.NewVM(ctx, r.options(secexec.EngineInProcess))
	if err != nil {
		return row, err
	}
	defer warm.Close()
	if err := execOK(ctx, warm, "true"); err != nil {
		return row, err
	}
	before, err := settledRSS()
	if err != nil {
		return row, err
	}
	vms := make([]*secexec.VM, 0, n)
	defer func() {
		for _, v := range vms {
			_ = v.Close()
		}
	}()
	for range n {
		v, err := secexec.NewVM(ctx, r.options(secexec.EngineInProcess))
		if err != nil {
			return row, err
		}
		vms = append(vms, v)
	}
	after, err := settledRSS()
	if err != nil {
		return row, err
	}
	row.N = n
	row.Value = mib(after-before) / float64(n)
	return row, nil
}

// liveScript prints one byte once it runs, then keeps its isolate alive
// until killed.
const liveScript = `process.stdout.write("r"); setInterval(() => {}, 1000)`

func (r *runner) memLiveIsolates(ctx context.Context, row Row) (Row, error) {
	row.Unit, row.Note = UnitMiB, "in process"
	n := min(r.cfg.N, maxHeldIsolates)
	vm, err := secexec.NewVM(ctx, r.options(secexec.EngineInProcess))
	if err != nil {
		return row, err
	}
	defer vm.Close()
	var reported int64
	if rec := r.cfg.Phases; rec != nil {
		h, m := rec.Counts()
		reported = h + m
	}
	// Warm up V8 and the warm pool, so that the delta counts isolates
	// held by processes, not the engine's one-time set-up.
	for range warmups {
		if err := execOK(ctx, vm, "node -e ''"); err != nil {
			return row, err
		}
	}
	before, err := settledRSS()
	if err != nil {
		return row, err
	}
	procs := make([]*secexec.Process, 0, n)
	defer func() {
		for _, p := range procs {
			_ = p.Signal(secexec.SIGKILL)
			_, _ = p.Wait(ctx)
		}
		// Let the killed processes' phase reports arrive now, so that
		// they are not counted by the hit-rate rows.
		if rec := r.cfg.Phases; rec != nil {
			wctx, cancel := context.WithTimeout(ctx, reportWait)
			defer cancel()
			_ = rec.WaitJS(wctx, reported+int64(warmups+len(procs)))
		}
	}()
	for range n {
		p, err := vm.Spawn(ctx, []string{"node", "-e", liveScript}, nil)
		if err != nil {
			return row, err
		}
		procs = append(procs, p)
		// Drain stderr so a failing process cannot block on a full pipe.
		go func() { _, _ = io.Copy(io.Discard, p.Stderr) }()
		var b [1]byte
		if _, err := io.ReadFull(p.Stdout, b[:]); err != nil {
			return row, fmt.Errorf("live node process did not start: %w", err)
		}
		go func() { _, _ = io.Copy(io.Discard, p.Stdout) }()
	}
	after, err := settledRSS()
	if err != nil {
		return row, err
	}
	row.N = n
	row.Value = mib(after-before) / float64(n)
	return row, nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
