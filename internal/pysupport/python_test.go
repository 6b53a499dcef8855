package pysupport_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
)

func TestMain(m *testing.M) { vmtest.Main(m) }

func newHost(t testing.TB, cfg vmhost.Config) *vmhost.Host { return vmtest.NewHost(t, cfg) }

type runResult struct {
	stdout, stderr string
	exit           *vmhost.Exit
}

// run runs argv in h: the real CPython for WASI from its pinned npm
// package, with the real userland.
func run(t testing.TB, h *vmhost.Host, stdin string, argv ...string) runResult {
	t.Helper()
	r := vmtest.Run(t, h, stdin, nil, argv...)
	return runResult{stdout: r.Stdout, stderr: r.Stderr, exit: r.Exit}
}

// hostPython runs a program with the host's python3, the reference.
func hostPython(t *testing.T, dir, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return hostPythonEnv(t, dir, stdin, []string{"PYTHONHASHSEED=0"}, args...)
}

// Programs whose output is the same on the host's CPython 3.11 and the
// VM's 3.12: the standard library at work, compared byte for byte.
var stdlibPrograms = map[string]string{
	"json": `import json
d = {"b": [1, 2.5, None, True], "a": "\u00e9\u4e2d", "c": {"x": -0.0}}
s = json.dumps(d, sort_keys=True, indent=2, ensure_ascii=True)
print(s)
print(json.loads(s) == d, json.dumps(json.loads('[1e400, "\\ud83d\\ude00"]')))`,
	"re": `import re
text = "alpha=1, beta=22; gamma = 333"
print(re.findall(r"(\w+)\s*=\s*(\d+)", text))
print(re.sub(r"(?P<k>\w+)=(?P<v>\d+)", r"\g<v>:\g<k>", text))
print(re.split(r"[,;]\s*", text), bool(re.fullmatch(r"[a-z]+", "abc")))`,
	"hashlib": `import hashlib, hmac, base64, zlib
data = b"secexec" * 1000
for name in ("md5", "sha1", "sha256", "sha512", "sha3_256", "blake2b"):
    print(name, hashlib.new(name, data).hexdigest())
print(hmac.new(b"key", data, "sha256").hexdigest(), zlib.crc32(data), base64.b64encode(zlib.compress(data, 9))[:40])`,
	"datetime": `import datetime
d = datetime.datetime(2024, 2, 29, 13, 45, 7, 123456, tzinfo=datetime.timezone(datetime.timedelta(hours=5, minutes=30)))
print(d.isoformat(), d.astimezone(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S %Z %j %a"))
print((d + datetime.timedelta(days=400)).date(), datetime.date(2024, 1, 1).isocalendar()[:], datetime.datetime.fromisoformat("2011-11-04T00:05:23+04:00").timestamp())`,
	"collections": `import collections, itertools, functools, heapq, bisect
c = collections.Counter("mississippi")
print(sorted(c.items()), c.most_common(2))
od = collections.OrderedDict.fromkeys("zyx"); od.move_to_end("z"); print(list(od))
dq = collections.deque(range(10), maxlen=5); dq.rotate(2); print(list(dq))
Pt = collections.namedtuple("Pt", "x y"); print(Pt(1, 2)._replace(y=5))
print(list(itertools.permutations("abc", 2))[:4], functools.reduce(lambda a, b: a * b, range(1, 20)))
h = [5, 1, 8, 3]; heapq.heapify(h); print(heapq.nsmallest(3, h), bisect.bisect([1, 3, 5, 7], 4))`,
	"pathlib and io": `import pathlib, io, os, tempfile
d = pathlib.Path(tempfile.mkdtemp(dir="."))
(d / "sub").mkdir()
(d / "sub" / "a.txt").write_text("line1\nline2\n")
(d / "b.bin").write_bytes(bytes(range(256)))
print(sorted(str(p.relative_to(d)) for p in d.rglob("*")))
print((d / "sub" / "a.txt").read_text().splitlines(), (d / "b.bin").stat().st_size)
buf = io.StringIO(); print("x", 1, sep="-", file=buf); print(repr(buf.getvalue()))
b = io.BytesIO(b"abc"); b.seek(1); print(b.read(), pathlib.PurePosixPath("/a/b/../c.tar.gz").suffixes)`,
	"csv": `import csv, io
rows = [["name", "note"], ["a,b", 'say "hi"'], ["multi\nline", ""]]
s = io.StringIO(); csv.writer(s).writerows(rows); print(repr(s.getvalue()))
print(list(csv.reader(io.StringIO(s.getvalue()))) == rows)
print(list(csv.DictReader(io.StringIO("x,y\n1,2\n3,4\n"))))`,
	"sqlite3": `import sqlite3
db = sqlite3.connect(":memory:")
db.execute("create table t (id integer primary key, name text, score real)")
db.executemany("insert into t (name, score) values (?, ?)", [("a", 1.5), ("b", 2.5), ("c", None)])
print(db.execute("select name, score from t order by score desc nulls last").fetchall())
print(db.execute("select count(*), sum(score), group_concat(name, '|') from t").fetchone())`,
	"decimal, fractions, math, struct": `import decimal, fractions, math, struct, statistics
decimal.getcontext().prec = 40
print(decimal.Decimal(1) / decimal.Decimal(7), fractions.Fraction(3, 4) + fractions.Fraction(1, 6))
print(math.factorial(30), math.isqrt(10**20), round(math.pi, 10), statistics.median([3, 1, 4, 1, 5]))
print(struct.pack("<IhQ", 1, -2, 3).hex(), struct.unpack(">d", struct.pack(">d", 1.1)))`,
}

func TestPythonStdlibMatchesHost(t *testing.T) {
	h := newHost(t, vmhost.Config{})
	for name, prog := range stdlibPrograms {
		t.Run(name, func(t *testing.T) {
			want, wantErr, wantCode := hostPython(t, t.TempDir(), "", "-c", prog)
			got := run(t, h, "", "python3", "-c", prog)
			if got.stdout != want || got.exit.Code != wantCode || got.stderr != wantErr {
				t.Fatalf("VM python3: code %d\nstdout:\n%s\nstderr:\n%s\nhost python3: code %d\nstdout:\n%s\nstderr:\n%s",
					got.exit.Code, got.stdout, got.stderr, wantCode, want, wantErr)
			}
		})
	}
}

func TestPythonScriptsStdinExitCodes(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, vmhost.Config{})
	script := "import sys\nfor line in sys.stdin:\n    print(line.rstrip()[::-1].upper())\nprint(sys.argv[1:], file=sys.stderr)\nsys.exit(int(sys.argv[1]))\n"
	if err := h.MkdirAll(ctx, vm.Workspace+"/tools", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteFile(ctx, vm.Workspace+"/tools/rev.py", []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tools", "rev.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{
		{"tools/rev.py", "7"},                 // relative to the working directory
		{vm.Workspace + "/tools/rev.py", "0"}, // absolute
		{"-c", "import sys; print(sys.stdin.read().count('\\n')); raise SystemExit('bye')"},
		{"-"}, // the program is stdin
	} {
		stdin := "abc\nhello world\n"
		if argv[0] == "-" {
			stdin = "print(6 * 7)\nimport sys; sys.exit(3)\n"
		}
		hostArgv := append([]string(nil), argv...)
		hostArgv[0] = strings.TrimPrefix(hostArgv[0], vm.Workspace+"/")
		want, wantErr, wantCode := hostPython(t, dir, stdin, hostArgv...)
		got := run(t, h, stdin, append([]string{"python3"}, argv...)...)
		if got.stdout != want || got.stderr != wantErr || got.exit.Code != wantCode {
			t.Errorf("%q: VM code %d out %q err %q; host code %d out %q err %q",
				argv, got.exit.Code, got.stdout, got.stderr, wantCode, want, wantErr)
		}
	}
}

func TestPythonExceptionsToStderr(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, vmhost.Config{})
	prog := "def f(x):\n    return 1 / x\n\nprint('before')\nf(0)\n"
	if err := h.WriteFile(ctx, vm.Workspace+"/boom.py", []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "boom.py"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	want, wantErr, wantCode := hostPython(t, dir, "", "boom.py")
	wantErr = strings.ReplaceAll(wantErr, dir, vm.Workspace)
	got := run(t, h, "", "python3", "boom.py")
	if got.stdout != want || got.exit.Code != wantCode || wantCode != 1 {
		t.Fatalf("VM: code %d out %q; host: code %d out %q", got.exit.Code, got.stdout, wantCode, want)
	}
	// The traceback names the same frames and the same error.
	if got.stderr != wantErr {
		t.Fatalf("traceback differs:\nVM:\n%s\nhost:\n%s", got.stderr, wantErr)
	}
}

func TestPythonFilesStayInTheVM(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, vmhost.Config{})
	// A host file with a secret: python in the VM must not reach it.
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	hostFile := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(hostFile, []byte(hex.EncodeToString(secret)), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := `import os, sys
with open("out.txt", "w") as f:
    f.write("from python\n")
print(open("/workspace/in.txt").read().strip())
for p in sys.argv[1:]:
    try:
        print(p, "READ", open(p).read())
    except OSError as e:
        print(p, type(e).__name__)
print(sorted(os.listdir("/")) == sorted(["bin", "dev", "etc", "home", "lib", "mnt", "opt", "proc", "root", "sbin", "srv", "tmp", "usr", "var", "workspace"]))
`
	if err := h.WriteFile(ctx, vm.Workspace+"/in.txt", []byte("from the VM\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{hostFile, "/proc/1/root" + hostFile, "/proc/self/cwd/../../.." + hostFile, "../../.." + hostFile}
	got := run(t, h, "", append([]string{"python3", "-c", prog}, paths...)...)
	lines := strings.Split(strings.TrimSuffix(got.stdout, "\n"), "\n")
	if got.exit.Code != 0 || len(lines) != len(paths)+2 || lines[0] != "from the VM" || lines[len(lines)-1] != "True" ||
		strings.Contains(got.stdout, hex.EncodeToString(secret)) {
		t.Fatalf("code %d\nstdout %q\nstderr %s", got.exit.Code, got.stdout, got.stderr)
	}
	for i, p := range paths {
		if l := lines[i+1]; l != p+" FileNotFoundError" && l != p+" PermissionError" {
			t.Errorf("%s: %q", p, l)
		}
	}
	b, err := h.ReadFile(ctx, vm.Workspace+"/out.txt", 1<<20)
	if err != nil || string(b) != "from python\n" {
		t.Fatalf("file python wrote: %q, %v", b, err)
	}
}
