package pysupport_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/pysupport"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
	"github.com/secexec/secexec/kernel"
)

// coldEnv makes a process ineligible for a parked interpreter without
// changing what CPython does: a PYTHON* variable CPython does not know.
var coldEnv = []string{"PYTHONSECEXECCOLD=1"}

// parkClaims is the shared engine's count of parked starts.
func parkClaims(t *testing.T) uint64 { return vmtest.Shared(t).Engine.Stats().ParkClaims }

// runParked runs argv and fails unless it started on a parked
// interpreter.
func runParked(t *testing.T, h *vmhost.Host, stdin string, extra []string, argv ...string) vmtest.Result {
	t.Helper()
	before := parkClaims(t)
	r := vmtest.Run(t, h, stdin, extra, argv...)
	if got := parkClaims(t) - before; got != 1 {
		t.Fatalf("%q: %d parked starts, want 1 (stderr %q)", argv, got, r.Stderr)
	}
	return r
}

func TestPythonParkedNeverShareSeeds(t *testing.T) {
	h := newHost(t, vmhost.Config{})
	prog := "import os, random; print(hash('x'), hash(b'y'), random.random(), os.urandom(16).hex())"
	a := runParked(t, h, "", nil, "python3", "-c", prog)
	b := runParked(t, h, "", nil, "python3", "-c", prog)
	fa, fb := strings.Fields(a.Stdout), strings.Fields(b.Stdout)
	if len(fa) != 4 || len(fb) != 4 || a.Exit.Code != 0 || b.Exit.Code != 0 {
		t.Fatalf("outputs %q %q (stderr %q %q)", a.Stdout, b.Stdout, a.Stderr, b.Stderr)
	}
	for i, what := range []string{"str hash seed", "bytes hash seed", "random state", "urandom"} {
		if fa[i] == fb[i] {
			t.Errorf("two parked processes share their %s: %s", what, fa[i])
		}
	}
}

// parkCase is a program run on a parked interpreter and by the host's
// python3 in a directory holding the same files.
type parkCase struct {
	name  string
	argv  []string // after "python3"
	stdin string
	files map[string]string // by path relative to the working directory
}

func TestPythonParkedMatchesHost(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, vmhost.Config{})
	show := "import sys, os\nprint(__name__, sys.argv, repr(sys.path[0]).replace(os.getcwd(), 'CWD'), os.getcwd() == os.environ['PWD'])\n" +
		"print(sys.stdout.encoding, sys.stdout.errors, sys.stdin.errors, sys.stderr.errors, sys.stdout.line_buffering, sys.stderr.line_buffering)\n" +
		"print(sys.stdin.name, sys.stdout.name, sys.stderr.name, sys.stdin.mode, sys.stdout.mode, sys.stdin is sys.__stdin__)\n" +
		"print(sorted(k for k in vars(sys.modules['__main__']) if k not in ('__loader__', '__spec__', '__builtins__')))\n" +
		"print(os.environ.get('FOO'), os.getenv('FOO'), 'SECEXEC_PYPARK' in os.environ, '_secexec_park' in sys.modules)\n"
	cases := []parkCase{
		{name: "c-argv", argv: []string{"-c", show, "a", "b c"}},
		{name: "c-stdin", argv: []string{"-c", "import sys; data = sys.stdin.read(); print(len(data), data.upper())"}, stdin: "hello\nworld\n"},
		{name: "c-exception", argv: []string{"-c", "def f():\n    raise ValueError('boom')\nprint('out')\nf()"}},
		{name: "c-exit-code", argv: []string{"-c", "import sys; print('x'); sys.exit(3)"}},
		{name: "c-exit-message", argv: []string{"-c", "raise SystemExit('bye now')"}},
		{name: "c-exit-none", argv: []string{"-c", "raise SystemExit(None)"}},
		{name: "c-keyboard-interrupt", argv: []string{"-c", "raise KeyboardInterrupt"}},
		{name: "c-chained", argv: []string{"-c", "try:\n    1/0\nexcept Exception as e:\n    raise KeyError('k') from e"}},
		{name: "c-excepthook", argv: []string{"-c", "import sys\nsys.excepthook = lambda t, v, tb: print('hook', t.__name__, v, tb.tb_frame.f_code.co_filename, tb.tb_next is None)\nraise OSError('x')"}},
		{name: "c-atexit", argv: []string{"-c", "import atexit; atexit.register(print, 'bye'); print('hi')"}},
		{name: "c-syntax-error", argv: []string{"-c", "print('a'"}},
		{name: "script", argv: []string{"sub/prog.py", "x", "-y"}, files: map[string]string{"sub/prog.py": show}},
		{name: "script-exception", argv: []string{"sub/boom.py"}, files: map[string]string{"sub/boom.py": "import helper\nhelper.go()\n", "sub/helper.py": "def go():\n    raise RuntimeError('deep')\n"}},
		{name: "script-file", argv: []string{"f.py"}, files: map[string]string{"f.py": "import os\nprint(__file__ == os.path.join(os.getcwd(), 'f.py'), __cached__, type(__loader__).__name__)\n"}},
		{name: "module", argv: []string{"-m", "pkg.tool", "z"}, files: map[string]string{"pkg/__init__.py": "", "pkg/tool.py": show}},
		{name: "module-exit", argv: []string{"-m", "quit3"}, files: map[string]string{"quit3.py": "import sys\nprint(__name__)\nsys.exit(3)\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wd := vm.Workspace + "/" + c.name
			dir := t.TempDir()
			if err := h.MkdirAll(ctx, wd, 0o755); err != nil {
				t.Fatal(err)
			}
			for p, body := range c.files {
				if err := h.MkdirAll(ctx, filepath.Dir(wd+"/"+p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := h.WriteFile(ctx, wd+"/"+p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, p), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, wantErr, wantCode := hostPythonEnv(t, dir, c.stdin, []string{"FOO=bar", "PWD=" + dir}, c.argv...)
			want, wantErr = strings.ReplaceAll(want, dir, wd), strings.ReplaceAll(wantErr, dir, wd)
			if wantCode == -1 && c.name == "c-keyboard-interrupt" {
				// The host's CPython kills itself with SIGINT; CPython
				// for WASI cannot, and exits 128+SIGINT (cold too).
				wantCode = 130
			}
			got := runIn(t, h, wd, c.stdin, []string{"FOO=bar"}, true, c.argv...)
			if got.Stdout != want || got.Stderr != wantErr || got.Exit.Code != wantCode {
				t.Errorf("parked python3: code %d\nstdout:\n%s\nstderr:\n%s\nhost python3: code %d\nstdout:\n%s\nstderr:\n%s",
					got.Exit.Code, got.Stdout, got.Stderr, wantCode, want, wantErr)
			}
		})
	}
}

// runIn runs python3 with args in directory wd of h, with vmtest.Env and
// extra, and checks that it started on a parked interpreter (parked) or
// cold.
func runIn(t *testing.T, h *vmhost.Host, wd, stdin string, extra []string, parked bool, args ...string) vmtest.Result {
	t.Helper()
	var out, errb strings.Builder
	spec := vmhost.RunSpec{Argv: append([]string{"python3"}, args...), Env: append(append([]string(nil), vmtest.Env...), extra...),
		Cwd: wd, Stdout: &out, Stderr: &errb, Timeout: 60 * time.Second}
	if stdin != "" {
		spec.Stdin = strings.NewReader(stdin)
	}
	before := parkClaims(t)
	ex, err := h.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("run %q: %v", args, err)
	}
	if n := parkClaims(t) - before; parked && n != 1 || !parked && n != 0 {
		t.Fatalf("%q: %d parked starts, want parked=%v (stderr %q)", args, n, parked, errb.String())
	}
	return vmtest.Result{Stdout: out.String(), Stderr: errb.String(), Exit: ex}
}

// hostPythonEnv is hostPython with extra environment variables.
func hostPythonEnv(t *testing.T, dir, stdin string, extra []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("host python3 (the reference for these tests): %v", err)
	}
	cmd := exec.Command(py, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + dir}, extra...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

func TestPythonParkedMatchesColdStart(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, vmhost.Config{})
	wd := vm.Workspace + "/cold"
	if err := h.MkdirAll(ctx, wd+"/pkg", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteFile(ctx, wd+"/pkg/__init__.py", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteFile(ctx, wd+"/pkg/boom.py", []byte("def f():\n    raise ValueError('m')\nf()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mods := "import sys\nprint(sorted(m for m in sys.modules if not m.startswith('encodings.')), __loader__.__class__.__name__)\n"
	if err := h.WriteFile(ctx, wd+"/pkg/mods.py", []byte(mods), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteFile(ctx, wd+"/pkg/bad.pyc", []byte("not bytecode"), 0o644); err != nil {
		t.Fatal(err)
	}
	pyc := runIn(t, h, wd, "", coldEnv, false, "-c", "import py_compile; py_compile.compile('pkg/mods.py', 'pkg/mods.pyc', doraise=True)")
	if pyc.Exit.Code != 0 {
		t.Fatalf("py_compile: %q", pyc.Stderr)
	}
	// What the host's 3.11 cannot be compared on: 3.12's own details.
	for _, args := range [][]string{
		{"-c", "import sys; print(sys.orig_argv[1:], sys.flags, sys.version_info[:2], sys.executable, sys.prefix)", "q"},
		{"-c", "import sys; print(sorted(m for m in sys.modules if not m.startswith('encodings.')))"},
		{"-c", "import sys, os; print([p.replace(os.getcwd(), 'CWD') for p in sys.path])"},
		{"-c", "import time, os; print(time.tzname, time.timezone, os.environ.get('TZ'))"},
		{"-m", "pkg.boom"},
		// Absolute: a cold start runs a relative script through
		// sitecustomize, which the parked one need not.
		{wd + "/pkg/mods.py"},
		{wd + "/pkg/mods.pyc"},
		{wd + "/pkg/bad.pyc"},
	} {
		extra := []string{"TZ=EST5EDT"}
		cold := runIn(t, h, wd, "", append(extra, coldEnv...), false, args...)
		parked := runIn(t, h, wd, "", extra, true, args...)
		if parked.Stdout != cold.Stdout || parked.Stderr != cold.Stderr || parked.Exit.Code != cold.Exit.Code {
			t.Errorf("%q: parked code %d out %q err %q; cold code %d out %q err %q", args,
				parked.Exit.Code, parked.Stdout, parked.Stderr, cold.Exit.Code, cold.Stdout, cold.Stderr)
		}
	}
}

func TestPythonParkedOnlyWhenStartUpCannotDiffer(t *testing.T) {
	h := newHost(t, vmhost.Config{})
	for _, c := range []struct {
		args  []string
		extra []string
	}{
		{args: []string{"-u", "-c", "print(1)"}},
		{args: []string{"-I", "-c", "print(1)"}},
		{args: []string{"-", "a"}},
		{args: []string{"-c", "print(1)"}, extra: []string{"PYTHONHASHSEED=0"}},
		{args: []string{"-c", "print(1)"}, extra: []string{"PYTHONIOENCODING=latin-1"}},
		{args: []string{"-c", "print(1)"}, extra: []string{"LC_ALL=C"}},
	} {
		r := runIn(t, h, vm.Workspace, "print(1)\n", c.extra, false, c.args...)
		if r.Stdout != "1\n" || r.Exit.Code != 0 {
			t.Errorf("%q %q: code %d out %q err %q", c.args, c.extra, r.Exit.Code, r.Stdout, r.Stderr)
		}
	}
	// A process holding descriptor 3 (where the instance's libc has "/")
	// starts cold.
	before := parkClaims(t)
	r := vmtest.Run(t, h, "", nil, "sh", "-c", `python3 -c "print(1)" 3</etc/hostname`)
	if r.Stdout != "1\n" || parkClaims(t) != before {
		t.Errorf("fd 3: out %q err %q, %d parked starts", r.Stdout, r.Stderr, parkClaims(t)-before)
	}
}

func TestPythonParkedNotWhenSupportFilesChanged(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, vmhost.Config{})
	runIn(t, h, vm.Workspace, "", nil, true, "-c", "pass")
	// The tenant's own sitecustomize: a parked instance ran the layer's,
	// so the process must start cold and run this one.
	site := "/opt/secexec/python/sitecustomize.py"
	if err := h.WriteFile(ctx, site, []byte("print('tenant site')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, h, vm.Workspace, "", nil, false, "-c", "pass")
	if r.Stdout != "tenant site\n" {
		t.Fatalf("out %q err %q", r.Stdout, r.Stderr)
	}
}

func TestPythonParkedEngineCloseDisposes(t *testing.T) {
	rt := vmtest.Fresh(t)
	h := vmtest.NewHostOn(t, rt, vmhost.Config{})
	for i := 0; i < 2; i++ {
		var out strings.Builder
		ex, err := h.Run(context.Background(), vmhost.RunSpec{Argv: []string{"python3", "-c", "print(6*7)"}, Env: vmtest.Env, Stdout: &out, Timeout: time.Minute})
		if err != nil || ex.Code != 0 || out.String() != "42\n" {
			t.Fatalf("run: %v %+v %q", err, ex, out.String())
		}
	}
	if s := rt.Engine.Stats(); s.ParkClaims != 2 {
		t.Fatalf("parked starts: %+v", s)
	}
	// A parked process still running when its VM closes ends with it.
	started := make(chan struct{})
	var once sync.Once
	ran := make(chan error, 1)
	go func() {
		_, err := h.Run(context.Background(), vmhost.RunSpec{Argv: []string{"python3", "-c", "print('up', flush=True)\nimport time\ntime.sleep(600)"},
			Env: vmtest.Env, Stdout: writerFunc(func([]byte) { once.Do(func() { close(started) }) })})
		ran <- err
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	<-ran
	if s := rt.Engine.Stats(); s.ParkClaims != 3 {
		t.Fatalf("the sleeping process did not start parked: %+v", s)
	}
	if err := rt.Engine.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if s := rt.Engine.Stats(); s.ParkLive != 0 || s.Parked != 0 {
		t.Fatalf("after Close: %+v", s)
	}
}

func TestPythonParkedLimits(t *testing.T) {
	h := newHost(t, vmhost.Config{Limits: kernel.Limits{CPUTime: 2 * time.Second, MemoryBytes: 128 << 20}})
	// The CPU limit ends a parked process as a cold one: its clock is
	// the instance's thread's (start-up included).
	r := runIn(t, h, vm.Workspace, "", nil, true, "-c", "while True: pass")
	if r.Exit.Outcome != vmhost.TimedOut || r.Exit.Reason != vmhost.ReasonCPUTime || r.Exit.Code != 124 {
		t.Fatalf("CPU loop: %+v err %q", r.Exit, r.Stderr)
	}
	// The instance's memory is the process's from the claim: growth
	// beyond the limit fails inside the program.
	prog := "try:\n    b = bytearray(200 << 20)\nexcept MemoryError:\n    print('MemoryError')\n"
	parked := runIn(t, h, vm.Workspace, "", nil, true, "-c", prog)
	cold := runIn(t, h, vm.Workspace, "", coldEnv, false, "-c", prog)
	if parked.Stdout != "MemoryError\n" || parked.Stdout != cold.Stdout || parked.Exit.Code != cold.Exit.Code {
		t.Fatalf("memory: parked %+v %q %q; cold %+v %q %q", parked.Exit, parked.Stdout, parked.Stderr, cold.Exit, cold.Stdout, cold.Stderr)
	}
}

// writerFunc calls f with each write.
type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }

func TestParkEligible(t *testing.T) {
	env := append([]string{"HOME=/home/user", "PATH=/bin", "PWD=/workspace", "TZ=UTC"}, pysupport.ParkEnv()...)
	var image []string
	for _, kv := range env {
		if kv != "SECEXEC_PYPARK=1" && kv != "PWD=/" && kv != "HOME=/" {
			image = append(image, kv)
		}
	}
	for _, c := range []struct {
		argv []string
		env  []string
		want bool
	}{
		{[]string{"python3", "-c", "pass"}, image, true},
		{[]string{"python3", "-c", ""}, image, true},
		{[]string{"python3", "-m", "json.tool", "x"}, image, true},
		{[]string{"python3", "x.py", "-c"}, image, true},
		{[]string{"python3"}, image, false},
		{[]string{"python3", "-c"}, image, false},
		{[]string{"python3", "-m", ""}, image, false},
		{[]string{"python3", "-"}, image, false},
		{[]string{"python3", ""}, image, false},
		{[]string{"python3", "-u", "-c", "pass"}, image, false},
		{[]string{"python3", "-cpass"}, image, false},
		{[]string{"python3", "-c", "pa\x00ss"}, image, false},
		{[]string{"python3", "-c", "pass"}, append(image[:len(image):len(image)], "PYTHONHASHSEED=0"), false},
		{[]string{"python3", "-c", "pass"}, append(image[:len(image):len(image)], "SECEXEC_PYPARK=1"), false},
		{[]string{"python3", "-c", "pass"}, append(image[:len(image):len(image)], "LANG=C.UTF-8"), false},
		{[]string{"python3", "-c", "pass"}, append(image[:len(image):len(image)], "X=a\x00b"), false},
		{[]string{"python3", "-c", "pass"}, []string{"PATH=/bin"}, false},
	} {
		if got := pysupport.ParkEligible(c.argv, c.env); got != c.want {
			t.Errorf("%q %q: %v, want %v", c.argv, c.env, got, c.want)
		}
	}
	p := string(pysupport.ParkPayload([]string{"python3", "-c", "print(1)"}, []string{"A=1", "B="}, "/w"))
	if want := "31\n/w\x003\x00python3\x00-c\x00print(1)\x00A=1\x00B="; p != want {
		t.Errorf("payload %q, want %q", p, want)
	}
}
