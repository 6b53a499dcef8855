package pysupport_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/policy"
)

// subprocessProgram uses subprocess the common ways; its output is the
// same with host CPython and real processes as in the VM with the spawn
// device (errno numbers differ between Linux and WASI, so errors print
// their type).
const subprocessProgram = `import subprocess, os, sys
print("first")  # buffered: the children's output below comes first, as on Linux
r = subprocess.run(["sh", "-c", "echo hi | wc -c"], capture_output=True)
print(r.returncode, r.stdout, r.stderr)
print(repr(subprocess.check_output("printf 'a b\\n' | tr ' ' '\\n'", shell=True, text=True)))
print(subprocess.run(["sort"], input="pear\napple\nfig\n", capture_output=True, text=True).stdout.split())
print(subprocess.call(["sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 4"], stderr=subprocess.STDOUT))
print(subprocess.run(["sh", "-c", "echo out; echo err >&2"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout)
try:
    subprocess.run(["sh", "-c", "echo partial; exit 3"], check=True, capture_output=True)
except subprocess.CalledProcessError as e:
    print("CalledProcessError", e.returncode, e.stdout, e)
try:
    subprocess.run(["no-such-command-xyz"])
except OSError as e:
    print(type(e).__name__, e.filename)
try:
    subprocess.run(["sleep", "10"], timeout=0.3)
except subprocess.TimeoutExpired as e:
    print("TimeoutExpired", e.cmd)
p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
out, _ = p.communicate(b"\x00\x01\xff bytes")
print(out, p.returncode)
p = subprocess.Popen(["tr", "a-z", "A-Z"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
p.stdin.write("line one\n")
p.stdin.write("line two\n")
p.stdin.close()
print([l for l in p.stdout], p.wait())
with open("in.txt", "w") as f:
    f.write("3\n1\n2\n")
with open("in.txt") as src, open("sorted.txt", "w") as dst:
    subprocess.run(["sort", "-n"], stdin=src, stdout=dst)
print(open("sorted.txt").read().split())
os.mkdir("sub")
print(subprocess.run(["pwd"], cwd="sub", capture_output=True, text=True).stdout.endswith("/sub\n"))
print(subprocess.run(["sh", "-c", "echo $FOO"], env={"FOO": "bar", "PATH": os.environ["PATH"]}, capture_output=True).stdout)
print(os.system("echo from-system; exit 2"))
sys.stdout.flush()
`

func TestPythonSubprocessMatchesHost(t *testing.T) {
	h := newHost(t, vmhost.Config{})
	dir := t.TempDir()
	want, wantErr, wantCode := hostPython(t, dir, "", "-c", subprocessProgram)
	got := run(t, h, "", "python3", "-c", subprocessProgram)
	if got.stdout != want || got.stderr != wantErr || got.exit.Code != wantCode {
		t.Fatalf("VM python3: code %d\nstdout:\n%s\nstderr:\n%s\nhost python3: code %d\nstdout:\n%s\nstderr:\n%s",
			got.exit.Code, got.stdout, got.stderr, wantCode, want, wantErr)
	}
}

// The spawn device spawns as the calling process: the exec policy, the
// fs policy on the device itself and the process limits all apply.
func TestPythonSubprocessIsPermissionChecked(t *testing.T) {
	prog := `import subprocess
for argv in (["wc", "-c"], ["sh", "-c", "echo hi | wc -c"], ["echo", "allowed"]):
    try:
        r = subprocess.run(argv, capture_output=True, text=True)
        print(argv[0], r.returncode, r.stdout.strip())
    except OSError as e:
        print(argv[0], type(e).__name__)
`
	h := newHost(t, vmhost.Config{Policy: policy.AllowAll().DenyExec("wc", "/usr/bin/wc", "/bin/wc")})
	got := run(t, h, "", "python3", "-c", prog)
	lines := strings.Split(got.stdout, "\n")
	if got.exit.Code != 0 || len(lines) < 3 || lines[0] != "wc PermissionError" ||
		!strings.HasPrefix(lines[1], "sh ") || strings.HasPrefix(lines[1], "sh 0") || lines[2] != "echo 0 allowed" {
		t.Fatalf("code %d\nstdout %q\nstderr %s", got.exit.Code, got.stdout, got.stderr)
	}

	// Without write access to the device, no subprocess at all.
	pol := policy.AllowAll().DenyFS([]policy.FSOp{policy.FSWrite}, "/opt/secexec/spawn")
	h = newHost(t, vmhost.Config{Policy: pol})
	got = run(t, h, "", "python3", "-c", "import subprocess\ntry:\n    subprocess.run(['echo', 'x'])\nexcept OSError as e:\n    print(type(e).__name__)\n")
	if got.stdout != "PermissionError\n" {
		t.Fatalf("device denied: code %d stdout %q stderr %s", got.exit.Code, got.stdout, got.stderr)
	}
}

// Hostile use of the device, from python and from the shell: bad
// requests are refused with an errno, nothing runs, nothing crashes.
func TestSpawnDeviceHostileRequests(t *testing.T) {
	h := newHost(t, vmhost.Config{})
	prog := `import os, errno
def attempt(data, chunk=1 << 20):
    fd = os.open("/opt/secexec/spawn", os.O_RDWR)
    try:
        for i in range(0, len(data), chunk):
            os.write(fd, data[i:i + chunk])
        return os.read(fd, 100)
    except OSError as e:
        return errno.errorcode[e.errno]
    finally:
        os.close(fd)
print(attempt(b""))
print(attempt(b"not json"))
print(attempt(b'{"argv": []}'))
print(attempt(b'{"argv": ["touch", "/workspace/pwned"], "uid": 0}'))
print(attempt(b'{"argv": ["echo"]}' * 2))
print(attempt(b'{"argv": ["x"], "stdin": "' + b"A" * (9 << 20) + b'"}'))
print(attempt(b'{"argv": ["/workspace/nope"]}')[:40])
`
	got := run(t, h, "", "python3", "-c", prog)
	want := "EINVAL\nEINVAL\nEINVAL\nEINVAL\nEINVAL\nE2BIG\nb'{\"error\":\"ENOENT\",\"pid\":0,\"status\":0,\"st'\n"
	if got.stdout != want {
		t.Fatalf("code %d\nstdout %q\nwant   %q\nstderr %s", got.exit.Code, got.stdout, want, got.stderr)
	}
	// The shell can write to it; a request never read is never run.
	got = run(t, h, "", "sh", "-c", `echo '{"argv":["touch","/workspace/pwned"]}' > /opt/secexec/spawn; cat /opt/secexec/spawn; ls /workspace`)
	if strings.Contains(got.stdout, "pwned") {
		t.Fatalf("a request ran: %q %q", got.stdout, got.stderr)
	}
	ctx := context.Background()
	if _, err := h.Stat(ctx, vm.Workspace+"/pwned", false); err == nil {
		t.Fatal("a request ran")
	}
}

func TestPythonLimits(t *testing.T) {
	// CPU: an endless loop ends at the VM's CPU limit, typed.
	h := newHost(t, vmhost.Config{Limits: kernel.Limits{CPUTime: 2 * time.Second}})
	got := run(t, h, "", "python3", "-c", "while True: pass")
	if got.exit.Code != 124 || got.exit.Outcome != vmhost.TimedOut || string(got.exit.Note) != vmhost.TimeLimitMessage+"\n" {
		t.Fatalf("CPU limit: %+v stderr %q", got.exit, got.stderr)
	}
	// Memory: an allocation beyond the limit is a MemoryError inside
	// python, and the process goes on.
	h = newHost(t, vmhost.Config{Limits: kernel.Limits{MemoryBytes: 64 << 20}})
	got = run(t, h, "", "python3", "-c", `
try:
    b = bytearray(200 << 20)
except MemoryError:
    print("MemoryError")
b = bytearray(8 << 20)
print(len(b))
`)
	if got.exit.Code != 0 || got.stdout != "MemoryError\n8388608\n" {
		t.Fatalf("memory limit: code %d out %q err %q", got.exit.Code, got.stdout, got.stderr)
	}
}

// A pure-Python package installed into the VM, here Debian's python3-six
// (the file the host's package installed, copied into the VM the way the
// .deb would place it), imports and works as on the host.
func TestPythonPurePackage(t *testing.T) {
	const debPath = "/usr/lib/python3/dist-packages/six.py"
	six, err := os.ReadFile(debPath)
	if err != nil {
		t.Fatalf("python3-six (installed by .ci/run): %v", err)
	}
	ctx := context.Background()
	h := newHost(t, vmhost.Config{})
	if err := h.MkdirAll(ctx, "/lib/python3/dist-packages", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteFile(ctx, "/lib/python3/dist-packages/six.py", six, 0o644); err != nil {
		t.Fatal(err)
	}
	// And a package of the user's own in the user site directory.
	site := vm.UserHome + "/.local/lib/python3.12/site-packages/greet"
	if err := h.MkdirAll(ctx, site, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteFile(ctx, site+"/__init__.py", []byte("def hello(n):\n    return 'hello ' + n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := `import six, sys
print(six.PY3, six.text_type is str, six.ensure_binary("\u00e9"), list(six.iteritems({"a": 1})))
print(six.moves.reduce(lambda a, b: a + b, [1, 2, 3]), six.b("x"), six.u("y"))
`
	want, wantErr, wantCode := hostPython(t, t.TempDir(), "", "-c", prog)
	got := run(t, h, "", "python3", "-c", prog)
	if got.stdout != want || got.stderr != wantErr || got.exit.Code != wantCode {
		t.Fatalf("VM: %d %q %q; host: %d %q %q", got.exit.Code, got.stdout, got.stderr, wantCode, want, wantErr)
	}
	got = run(t, h, "", "python3", "-c", "import greet, six; print(greet.hello('vm'), six.__file__, six.__version__)")
	if !strings.HasPrefix(got.stdout, "hello vm /lib/python3/dist-packages/six.py 1.") {
		t.Fatalf("user site: %d %q %q", got.exit.Code, got.stdout, got.stderr)
	}
}
