package security_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/wasmgen"
)

// Every guest of a VM reads one clock (invariant 9, docs/threat-model.md
// "timing"): by default real time in 1 ms steps, for node, WebAssembly,
// python, file times and /proc alike; full resolution only on request
// (Clock: ClockReal), standing still only on request (ClockFrozen).

// clockVM is a VM with the given clock whose guests may use everything,
// with a host directory mounted at /mnt/host (file times the host's kernel
// sets) and a CPU limit that ends a loop the clock never lets end.
func clockVM(t *testing.T, c secexec.Clock) *secexec.VM {
	return newVM(t, secexec.Options{
		Permissions: secexec.AllowAll(),
		Clock:       c,
		Mounts:      []secexec.Mount{{Path: "/mnt/host", HostDir: t.TempDir()}},
		Limits:      secexec.Limits{CPUTime: 20 * time.Second},
	})
}

// nodeClockProbe samples every node clock for 30 ms of the guest's own
// monotonic clock and at least 8 steps of it (a descheduled guest on a
// loaded machine can see one 40 ms step and nothing else), for at most 5 s
// or 1e6 rounds (which a frozen clock reaches), and
// prints: samples whose value is finer than a millisecond, distinct
// monotonic readings, the smallest positive step of hrtime.bigint (ns),
// and whether new Date ever read outside the Date.now() calls around it
// (another clock).
const nodeClockProbe = `
const t0 = process.hrtime.bigint();
let fine = 0, n = 0, steps = 0, skew = false;
const mono = [t0];
for (;;) {
  const b = process.hrtime.bigint(), h = process.hrtime(), p = performance.now(), u = process.uptime();
  const d = Date.now(), nd = new Date().getTime(), d2 = Date.now();
  if (b !== mono[mono.length - 1]) steps++;
  mono.push(b);
  if (b % 1000000n || h[1] % 1e6 || !Number.isInteger(p) || Math.abs(Math.round(u * 1e3) - u * 1e3) > 1e-6) fine++;
  if (!(d <= nd && nd <= d2)) skew = true;
  if ((b - t0 >= 30000000n && steps >= 8) || b - t0 >= 5000000000n || ++n >= 1e6) break;
}
let step = 0n;
for (let i = 1; i < mono.length; i++) { const s = mono[i] - mono[i - 1]; if (s > 0n && (step === 0n || s < step)) step = s; }
console.log(fine, new Set(mono).size, String(step), skew);
`

// pyClockProbe does the same for python (CPython on WASI: every clock is
// a clock_time_get) and adds the resolutions python reads with
// clock_res_get.
const pyClockProbe = `
import time
t0 = time.monotonic_ns()
fine = n = steps = 0
mono = [t0]
while True:
    m, p, w, c = time.monotonic_ns(), time.perf_counter_ns(), time.time_ns(), time.process_time_ns()
    if m != mono[-1]:
        steps += 1
    mono.append(m)
    fine += sum(1 for v in (m, p, w, c) if v % 1000000)
    n += 1
    if (m - t0 >= 30000000 and steps >= 8) or m - t0 >= 5000000000 or n >= 100000:
        break
steps = [b - a for a, b in zip(mono, mono[1:]) if b > a]
print(fine, len(set(mono)), min(steps) if steps else 0, repr(time.get_clock_info('monotonic').resolution), repr(time.get_clock_info('time').resolution))
`

// wasmClockRes is a WASI command that exits with the resolution
// clock_res_get reports for clock id, in units of 100 µs (10 for 1 ms, 0
// for a nanosecond).
func wasmClockRes(id int32) []byte {
	body := append(wasmgen.I32Const(id), wasmgen.I32Const(0)...)
	body = append(append(body, wasmgen.Call(0)...), wasmgen.Drop()...)
	body = append(body, wasmgen.I32Const(0)...)
	body = append(body, 0x29, 0x03, 0x00) // i64.load align=8 offset=0
	body = append(body, wasmgen.I64Const(100000)...)
	body = append(body, 0x80, 0xa7) // i64.div_u, i32.wrap_i64
	body = append(body, wasmgen.Call(1)...)
	return wasmgen.Module([]wasmgen.Import{
		{Module: "wasi_snapshot_preview1", Name: "clock_res_get", Type: wasmgen.Type{Params: []byte{wasmgen.I32, wasmgen.I32}, Results: []byte{wasmgen.I32}}},
		{Module: "wasi_snapshot_preview1", Name: "proc_exit", Type: wasmgen.Type{Params: []byte{wasmgen.I32}}},
	}, []wasmgen.Func{{Body: body, Export: "_start"}}, 1, nil)
}

func fields(t *testing.T, r *secexec.Result, n int) []string {
	t.Helper()
	f := strings.Fields(string(r.Stdout))
	if r.ExitCode != 0 || len(f) != n {
		t.Fatalf("exit %d, stdout %q (want %d fields), stderr %q", r.ExitCode, r.Stdout, n, trunc(r.Stderr))
	}
	return f
}

// A deadline loop on Date.now() ends: the default clock moves.
func TestClockDeadlineLoopEnds(t *testing.T) {
	vm := clockVM(t, secexec.ClockCoarse)
	r := node(t, vm, `const t = Date.now(), end = t + 100; let n = 0; while (Date.now() < end) n++; const took = Date.now() - t; console.log(took >= 100 && took < 5000 ? 'ended' : 'took ' + took, n > 0)`)
	if got := strings.TrimSpace(string(r.Stdout)); got != "ended true" {
		t.Fatalf("deadline loop: exit %d %q %q", r.ExitCode, r.Stdout, trunc(r.Stderr))
	}
	// A duration a tool prints is not "0ms".
	r = node(t, vm, `console.time('t'); const end = Date.now() + 20; while (Date.now() < end); console.timeEnd('t')`)
	if s := string(r.Stdout); !strings.HasPrefix(s, "t: ") || strings.HasPrefix(s, "t: 0ms") {
		t.Errorf("console.time printed %q (stderr %q)", s, trunc(r.Stderr))
	}
	usable(t, vm)
}

// node's clocks (Date, new Date, performance.now, process.hrtime and
// hrtime.bigint, process.uptime) and python's (monotonic, perf_counter,
// time, process_time) move in whole milliseconds and nothing finer; the
// three runtimes report one resolution: the smallest step node and python
// observe is 1 ms, and clock_res_get says 1 ms to python and to a raw
// WASI module, for the realtime and monotonic clocks.
func TestClockCoarseEverywhere(t *testing.T) {
	vm := clockVM(t, secexec.ClockCoarse)
	f := fields(t, node(t, vm, nodeClockProbe), 4)
	if f[0] != "0" || f[2] != "1000000" || f[3] != "false" {
		t.Errorf("node: %s sub-ms samples, smallest step %s ns, Date skew %s (want 0, 1000000, false)", f[0], f[2], f[3])
	}
	if n, _ := strconv.Atoi(f[1]); n < 2 {
		t.Errorf("node: only %d distinct readings in 30 ms: the clock does not move", n)
	}
	p := fields(t, run(t, vm, []string{"python3", "-c", pyClockProbe}, nil), 5)
	if p[0] != "0" || p[2] != "1000000" || p[3] != "0.001" || p[4] != "0.001" {
		t.Errorf("python: %s sub-ms samples, smallest step %s ns, resolutions %s %s (want 0, 1000000, 0.001, 0.001)", p[0], p[2], p[3], p[4])
	}
	if n, _ := strconv.Atoi(p[1]); n < 2 {
		t.Errorf("python: only %d distinct readings in 30 ms", n)
	}
	ctx := context.Background()
	for id, name := range []string{"realtime", "monotonic"} {
		path := "/tmp/res-" + name
		if err := vm.FS().WriteFile(ctx, path, wasmClockRes(int32(id)), 0o755); err != nil {
			t.Fatal(err)
		}
		if r := run(t, vm, []string{path}, nil); r.ExitCode != 10 {
			t.Errorf("clock_res_get(%s) = %d × 100µs, want 10 (1 ms); stderr %q", name, r.ExitCode, trunc(r.Stderr))
		}
	}
	// A Rust command (uutils date) reads clock_time_get too.
	for i := 0; i < 5; i++ {
		r := run(t, vm, []string{"date", "+%N"}, nil)
		if s := strings.TrimSpace(string(r.Stdout)); len(s) != 9 || !strings.HasSuffix(s, "000000") {
			t.Fatalf("date +%%N = %q (exit %d, stderr %q): finer than a millisecond", s, r.ExitCode, trunc(r.Stderr))
		}
	}
	usable(t, vm)
}

// File times — memory filesystems (/tmp, the overlay root) and a host
// mount, whose times the host's kernel sets — have no sub-millisecond
// part, seen from node, python and stat(1), and lie on the guest's clock:
// not after Date.now(), not far before it.
func TestClockFileTimes(t *testing.T) {
	vm := clockVM(t, secexec.ClockCoarse)
	for _, dir := range []string{"/tmp", "/workspace", "/mnt/host"} {
		t.Run(strings.ReplaceAll(dir[1:], "/", "_"), func(t *testing.T) {
			file := dir + "/f"
			r := node(t, vm, `const fs = require('fs'); fs.writeFileSync('`+file+`', 'x'); const s = fs.statSync('`+file+`'); const now = Date.now();
console.log([s.mtimeMs, s.atimeMs, s.ctimeMs].every(Number.isInteger), s.mtimeMs <= now && now - s.mtimeMs < 2000, s.mtimeMs, s.atimeMs, s.ctimeMs, now)`)
			if got := string(r.Stdout); !strings.HasPrefix(got, "true true ") {
				t.Errorf("node: whole ms, on the clock, mtime, atime, ctime, now = %q (stderr %q)", got, trunc(r.Stderr))
			}
			r = run(t, vm, []string{"python3", "-c", `import os, time; open('` + file + `', 'a').write('y'); s = os.stat('` + file + `'); n = time.time_ns()
print(s.st_mtime_ns % 1000000, s.st_atime_ns % 1000000, s.st_ctime_ns % 1000000, 0 <= n - s.st_mtime_ns < 2000000000)`}, nil)
			if got := strings.TrimSpace(string(r.Stdout)); got != "0 0 0 True" {
				t.Errorf("python: sub-ms parts, on the clock = %q (stderr %q)", got, trunc(r.Stderr))
			}
			r = run(t, vm, []string{"stat", "-c", "%y", file}, nil)
			if s := strings.Fields(string(r.Stdout)); len(s) < 2 || !strings.HasSuffix(s[1], "000000") {
				t.Errorf("stat -c %%y = %q (stderr %q)", r.Stdout, trunc(r.Stderr))
			}
		})
	}
	// Pipes show times on the same clock.
	r := sh(t, vm, `echo | python3 -c 'import os; print(os.fstat(0).st_mtime_ns % 1000000)'`)
	if got := strings.TrimSpace(string(r.Stdout)); got != "0" {
		t.Errorf("pipe mtime sub-ms part %q (stderr %q)", got, trunc(r.Stderr))
	}
	usable(t, vm)
}

// /proc/uptime is the VM's uptime, not the host's.
func TestClockProcUptime(t *testing.T) {
	vm := clockVM(t, secexec.ClockCoarse)
	r := run(t, vm, []string{"cat", "/proc/uptime"}, nil)
	f := strings.Fields(string(r.Stdout))
	if len(f) != 2 {
		t.Fatalf("/proc/uptime = %q (stderr %q)", r.Stdout, trunc(r.Stderr))
	}
	up, err := strconv.ParseFloat(f[0], 64)
	if err != nil || up < 0 || up > 60 {
		t.Errorf("a fresh VM's uptime is %q", f[0])
	}
	if host, err := os.ReadFile("/proc/uptime"); err == nil {
		if hf := strings.Fields(string(host)); len(hf) > 0 && hf[0] == f[0] {
			t.Errorf("/proc/uptime is the host's: %q", f[0])
		}
	}
	r = node(t, vm, `console.log(require('os').uptime() < 60)`)
	if got := strings.TrimSpace(string(r.Stdout)); got != "true" {
		t.Errorf("os.uptime() < 60: %q (stderr %q)", got, trunc(r.Stderr))
	}
}

// Clock: ClockReal gives every runtime the full resolution, and says so.
func TestClockRealIsFine(t *testing.T) {
	vm := clockVM(t, secexec.ClockReal)
	f := fields(t, node(t, vm, nodeClockProbe), 4)
	if f[0] == "0" || f[2] == "1000000" {
		t.Errorf("node on a real clock: %s sub-ms samples, smallest step %s ns", f[0], f[2])
	}
	p := fields(t, run(t, vm, []string{"python3", "-c", pyClockProbe}, nil), 5)
	if p[0] == "0" || p[3] != "1e-09" {
		t.Errorf("python on a real clock: %s sub-ms samples, resolution %s", p[0], p[3])
	}
	r := node(t, vm, `const fs = require('fs'); let fine = false; for (let i = 0; i < 20 && !fine; i++) { fs.writeFileSync('/tmp/r' + i, 'x'); fine = !Number.isInteger(fs.statSync('/tmp/r' + i).mtimeMs) } console.log(fine)`)
	if got := strings.TrimSpace(string(r.Stdout)); got != "true" {
		t.Errorf("real clock file times have no sub-ms part: %q (stderr %q)", got, trunc(r.Stderr))
	}
}

// Clock: ClockFrozen stands still within a process (node, python) and
// across file writes; time spent sleeping does not show.
func TestClockFrozenStands(t *testing.T) {
	vm := clockVM(t, secexec.ClockFrozen)
	f := fields(t, node(t, vm, nodeClockProbe), 4)
	if f[1] != "1" {
		t.Errorf("node on a frozen clock: %s distinct readings", f[1])
	}
	r := node(t, vm, `const a = Date.now(), p = performance.now(); let x = 0; for (let i = 0; i < 3e6; i++) x += i; console.log(Date.now() === a, new Date().getTime() === a, performance.now() === p, process.uptime())`)
	if got := strings.TrimSpace(string(r.Stdout)); got != "true true true 0" {
		t.Errorf("node frozen: %q (stderr %q)", got, trunc(r.Stderr))
	}
	// Intl's formatters default to the VM's clock, not V8's own.
	r = node(t, vm, `const f = new Intl.DateTimeFormat('en-US', {hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3, hour12: false, timeZone: 'UTC'});
let x = 0; for (let i = 0; i < 3e6; i++) x += i;
console.log(f.format() === f.format(Date.now()), JSON.stringify(f.formatToParts()) === JSON.stringify(f.formatToParts(Date.now())))`)
	if got := strings.TrimSpace(string(r.Stdout)); got != "true true" {
		t.Errorf("Intl.DateTimeFormat on a frozen clock: %q (stderr %q)", got, trunc(r.Stderr))
	}
	p := fields(t, run(t, vm, []string{"python3", "-c", pyClockProbe}, nil), 5)
	if p[1] != "1" {
		t.Errorf("python on a frozen clock: %s distinct readings", p[1])
	}
	r = sh(t, vm, `echo a > /tmp/a; sleep 0.05; echo b > /mnt/host/b; stat -c %Y.%y /tmp/a /mnt/host/b`)
	if lines := strings.Split(strings.TrimSpace(string(r.Stdout)), "\n"); len(lines) != 2 || lines[0] != lines[1] {
		t.Errorf("frozen file times differ: %q (stderr %q)", r.Stdout, trunc(r.Stderr))
	}
}
