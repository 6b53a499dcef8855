package wasm_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmtest"
	"github.com/secexec/secexec/kernel/vfs"
	userland "github.com/secexec/secexec/userland/wasm"
)

var builds sync.Map // package dir -> *buildResult

type buildResult struct {
	once sync.Once
	wasm []byte
	err  error
	out  []byte
}

// buildWasm compiles a Go main package to wasm32-wasi with the ordinary
// toolchain, once per test binary.
func buildWasm(t testing.TB, pkg string) []byte {
	t.Helper()
	v, _ := builds.LoadOrStore(pkg, &buildResult{})
	r := v.(*buildResult)
	r.once.Do(func() {
		dir, err := os.MkdirTemp("", "secexec-wasm-build-")
		if err != nil {
			r.err = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "prog.wasm")
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		r.out, r.err = cmd.CombinedOutput()
		if r.err == nil {
			r.wasm, r.err = os.ReadFile(out)
		}
	})
	if r.err != nil {
		t.Fatalf("build %s for wasip1: %v\n%s", pkg, r.err, r.out)
	}
	return r.wasm
}

// writeFile puts a file into the VM as the host.
func (v *testVM) writeFile(path string, data []byte, mode uint32) {
	v.t.Helper()
	ctx := context.Background()
	f, err := v.vm.VFS.Open(ctx, vfs.Root, path, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, mode)
	if err != nil {
		v.t.Fatal(err)
	}
	defer f.DecRef()
	for len(data) > 0 {
		n, err := f.Write(ctx, data)
		if err != nil {
			v.t.Fatal(err)
		}
		data = data[n:]
	}
	// The owner is the guest user, as a file the user uploaded would be.
	if err := v.vm.VFS.SetAttr(ctx, vfs.Root, path, true, vfs.SetAttr{Mask: vfs.SetUID | vfs.SetGID, UID: vm.UserUID, GID: vm.UserGID}); err != nil {
		v.t.Fatal(err)
	}
}

// The host functions take hostile arguments (pointers past the end of
// memory, huge counts, malformed spawn records) and answer with the errno
// the ABI asks for; nothing panics, hangs or spawns.
func TestHostileArguments(t *testing.T) {
	prog := buildWasm(t, "./testdata/probe")
	v := newVM(t, vm.Config{})
	v.writeFile("/workspace/probe.wasm", prog, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := v.exec(ctx, []string{"./probe.wasm"}, runOpts{})
	if r.code != 0 {
		t.Fatalf("probe exited %d; stderr %q", r.code, r.stderr)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(r.stdout)), "\n") {
		k, val, ok := strings.Cut(line, "=")
		if ok {
			got[k] = val
		}
	}
	want := map[string]string{
		"write_bad_iovs":          "21",
		"write_huge_count":        "28",
		"write_bad_nwritten":      "21",
		"write_bad_buffer":        "21",
		"read_bad_buffer":         "21",
		"seek_pipe":               "70",
		"open_bad_path":           "21",
		"open_long_path":          "37",
		"open_bad_out":            "21",
		"args_bad":                "21",
		"environ_bad":             "21",
		"random_bad":              "21",
		"poll_zero":               "28",
		"poll_huge":               "28",
		"poll_bad_out":            "21",
		"prestat_short_name":      "37",
		"prestat_past_end":        "8",
		"readdir_bad_buf":         "21",
		"sock_send":               "57",
		"net_send":                "8",
		"close_preopen":           "0",
		"tagged_after_close":      "0",
		"spawn_truncated_actions": "28",
		"spawn_bad_opcode":        "28",
		"spawn_dup2_closed":       "8",
		"spawn_bad_attr":          "58",
		"spawn_actions_2big":      "1",
		"spawn_argv_2big":         "1",
		"spawn_bad_argv":          "21",
		"spawn_empty_path":        "44",
		"spawn_not_found":         "44",
		"spawn_bad_ret":           "21",
		"wait_no_children":        "12",
		"wait_bad_options":        "28",
		"exec_not_found":          "44",
		"exec_bad_fds":            "21",
		"spawn_true":              "0",
		"wait_true":               "0 code=0 sig=0 pid_ok=true",
		"kill_no_such":            "71",
		"sigmask_bad_how":         "28",
		"dup2_beyond_limit":       "8",
		"pipe":                    "0",
		"umask_set":               "0",
		"umask_old":               "22",
		"umask_now":               "27",
		"getpwuid_small":          "68",
		"getpwuid_missing":        "44",
		"getpwnam":                "0 user:x:1000:1000::/home/user:/bin/sh",
		"getpwnam_bad":            "21",
		"getgrent0":               "0 root:x:0:",
		"getgrent_end":            "44",
		"path_mode_missing":       "0",
		"path_mode_bad":           "0",
		"fd_size_bad":             "-1",
		"statfs_bad":              "21",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("probe printed %d results, want %d:\n%s", len(got), len(want), r.stdout)
	}
}

// A program the user compiled with the Go toolchain runs: argv, files,
// directories, stdin, timers and its exit status.
func TestUserProgram(t *testing.T) {
	prog := buildWasm(t, "./testdata/hello")
	v := newVM(t, vm.Config{})
	v.writeFile("/workspace/hello.wasm", prog, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	want := `args=["a" "b c"]
wd=/workspace <nil>
read=written <nil>
link=<nil> 2
dir=[hello.link hello.out hello.wasm] <nil>
stdin="input\n" <nil>
slept=true
`
	// Directly, and through the shell (PATH-less relative path).
	for _, argv := range [][]string{
		{"/workspace/hello.wasm", "a", "b c"},
		{"sh", "-c", "./hello.wasm a 'b c'"},
	} {
		r := v.exec(ctx, argv, runOpts{stdin: []byte("input\n")})
		if string(r.stdout) != want || r.code != 3 {
			t.Errorf("%q: stdout %q stderr %q code %d", argv, r.stdout, r.stderr, r.code)
		}
	}
	// Run again: the module's fingerprint is remembered, not recomputed.
	before := setup(t).eng.Stats()
	r := v.exec(ctx, []string{"/workspace/hello.wasm"}, runOpts{})
	if r.code != 3 {
		t.Fatalf("third run: code %d stderr %q", r.code, r.stderr)
	}
	after := setup(t).eng.Stats()
	if after.HashHits <= before.HashHits || after.HashMisses != before.HashMisses {
		t.Errorf("fingerprint cache: before %+v after %+v", before, after)
	}
	// A changed file is a different program.
	v.writeFile("/workspace/hello.wasm", buildWasm(t, "./testdata/probe"), 0o755)
	r = v.exec(ctx, []string{"/workspace/hello.wasm"}, runOpts{})
	if r.code != 0 || !bytes.Contains(r.stdout, []byte("spawn_true=0")) {
		t.Errorf("rewritten module: code %d stdout %.100q", r.code, r.stdout)
	}
}

// secexec's own grep and jq (Go, compiled to WASI by package
// userland/wasm) run as registered commands in pipelines of the agentOS
// userland.
func TestOwnUserland(t *testing.T) {
	e := setup(t)
	for _, name := range userland.Names() {
		mod := vmtest.Module(t, name)
		if _, err := e.store.Register(name, mod); err != nil {
			t.Fatal(err)
		}
	}
	v := newVM(t, vm.Config{})
	ctx := ctxFor(t, 60*time.Second)
	r := v.sh(ctx, `printf 'apple\nbanana\ncherry\n' > /tmp/f; grep an /tmp/f; printf 'x\ny\n' | grep -c y; grep -q zzz /tmp/f; echo rc=$?; cd /tmp && grep -rn err . | head -1; ls /usr/bin/grep /bin/grep`)
	want := "banana\n1\nrc=1\n./f:3:cherry\n/bin/grep\n/usr/bin/grep\n"
	if string(r.stdout) != want || r.code != 0 {
		t.Errorf("grep: stdout %q stderr %q code %d; want %q", r.stdout, r.stderr, r.code, want)
	}
	r = v.sh(ctx, `echo '{"a":{"b":[1,2,3]},"c":"x"}' | jq -c '.a.b | map(.*2)'; echo '{"c":"x"}' > /tmp/j.json; jq -r .c /tmp/j.json; echo '[' | jq . >/dev/null 2>&1 || echo invalid`)
	want = "[2,4,6]\nx\ninvalid\n"
	if string(r.stdout) != want || r.code != 0 {
		t.Errorf("jq: stdout %q stderr %q code %d; want %q", r.stdout, r.stderr, r.code, want)
	}
}

// "#!" scripts run their interpreter with the script path inserted, also
// nested, up to the ELOOP bound; a file that is neither is ENOEXEC.
func TestScripts(t *testing.T) {
	v := newVM(t, vm.Config{})
	v.writeFile("/workspace/s1", []byte("#!/bin/sh\necho \"s1 $0 $*\"\n"), 0o755)
	v.writeFile("/workspace/s2", []byte("#! /workspace/s1 -x\nignored\n"), 0o755)
	v.writeFile("/workspace/loop", []byte("#!/workspace/loop\n"), 0o755)
	v.writeFile("/workspace/junk", []byte("just text\n"), 0o755)
	ctx := ctxFor(t, 60*time.Second)
	r := v.exec(ctx, []string{"/workspace/s1", "a", "b"}, runOpts{})
	if string(r.stdout) != "s1 /workspace/s1 a b\n" || r.code != 0 {
		t.Errorf("s1: stdout %q stderr %q code %d", r.stdout, r.stderr, r.code)
	}
	r = v.sh(ctx, "./s2 c; ./loop; echo rc=$?; ./junk; echo rc=$?")
	want := "s1 /workspace/s1 -x /workspace/s2 c\nrc=126\nrc=126\n"
	if string(r.stdout) != want {
		t.Errorf("stdout %q stderr %q; want %q", r.stdout, r.stderr, want)
	}
	if !bytes.Contains(r.stderr, []byte("(os error 32)")) || !bytes.Contains(r.stderr, []byte("(os error 45)")) {
		t.Errorf("stderr %q lacks ELOOP and ENOEXEC", r.stderr)
	}
}

// The structural checks of the agentOS checklist (§14): ls -la / lists the
// root with modes, and multi-call modules pick their behaviour from
// argv[0] (ls run as dir).
func TestStructure(t *testing.T) {
	v := newVM(t, vm.Config{})
	ctx := ctxFor(t, 60*time.Second)
	r := v.exec(ctx, []string{"ls", "-la", "/"}, runOpts{})
	lines := strings.Split(strings.TrimSpace(string(r.stdout)), "\n")
	if r.code != 0 || len(lines) < 10 || !strings.HasPrefix(lines[0], "total ") {
		t.Fatalf("ls -la /: code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	mode := regexp.MustCompile(`^[-dlcbps][rwxsStT-]{9} `)
	for _, l := range lines[1:] {
		if !mode.MatchString(l) {
			t.Errorf("ls -la / line %q", l)
		}
	}
	if !strings.Contains(string(r.stdout), " bin -> usr/bin\n") {
		t.Errorf("no /bin symlink in %s", r.stdout)
	}
	r = v.exec(ctx, []string{"/usr/bin/dir", "--version"}, runOpts{})
	if !strings.HasPrefix(string(r.stdout), "dir (uutils coreutils) 0.7.0") {
		t.Errorf("dir --version: %q %q", r.stdout, r.stderr)
	}
	// Guests run as the VM's user. (uutils stat and ls cannot show
	// owners: their std has no source for st_uid, agentOS ABI §13.11.)
	r = v.sh(ctx, "id; whoami; touch /tmp/mine")
	if string(r.stdout) != "uid=1000(user) gid=1000(user) groups=1000\nuser\n" {
		t.Errorf("identity: %q %q", r.stdout, r.stderr)
	}
	if st, err := v.vm.VFS.Stat(context.Background(), vfs.Root, "/tmp/mine"); err != nil || st.UID != vm.UserUID || st.GID != vm.UserGID {
		t.Errorf("file made by a guest: %+v, %v", st, err)
	}
}

// wasmModule assembles a module whose _start has the given body, with
// one optional function import (module, name, type index 0 = () -> ()).
func wasmModule(importMod, importName string, body ...byte) []byte {
	sect := func(id byte, content ...byte) []byte { return append([]byte{id, byte(len(content))}, content...) }
	str := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, sect(1, 1, 0x60, 0, 0)...) // type 0: () -> ()
	start := byte(0)
	if importMod != "" {
		imp := append([]byte{1}, str(importMod)...)
		imp = append(append(imp, str(importName)...), 0, 0)
		m = append(m, sect(2, imp...)...)
		start = 1
	}
	m = append(m, sect(3, 1, 0)...)
	m = append(m, sect(7, append(append([]byte{1}, str("_start")...), 0, start)...)...)
	fn := append([]byte{0}, body...)
	fn = append(fn, 0x0b)
	return append(m, sect(10, append([]byte{1, byte(len(fn))}, fn...)...)...)
}

// Modules the runtime cannot run fail at exec with ENOEXEC (the shell's
// 126), and a trap ends the process with status 1 and one line on stderr.
func TestModuleValidation(t *testing.T) {
	v := newVM(t, vm.Config{})
	ctx := ctxFor(t, 60*time.Second)
	for _, tc := range []struct {
		name   string
		module []byte
		code   int
		stderr string
	}{
		{"ok", wasmModule("", ""), 0, ""},
		{"trap", wasmModule("", "", 0x00), 1, "trap: wasm trap: unreachable\n"},
		{"empty", []byte("\x00asm\x01\x00\x00\x00"), 126, "(os error 45)"},
		{"garbage", []byte("\x00asm\x01\x00\x00\x00\xff\xff\xff"), 126, "(os error 45)"},
		{"foreign_import", wasmModule("env", "foo"), 126, "(os error 45)"},
		{"wrong_signature", wasmModule("host_process", "proc_getpid"), 126, "(os error 45)"},
		{"calls_host", wasmModule("wasi_snapshot_preview1", "sched_yield"), 126, "(os error 45)"},
	} {
		v.writeFile("/workspace/"+tc.name, tc.module, 0o755)
		r := v.sh(ctx, "./"+tc.name)
		if r.code != tc.code || !strings.Contains(string(r.stderr), tc.stderr) {
			t.Errorf("%s: code %d stderr %q, want %d and %q", tc.name, r.code, r.stderr, tc.code, tc.stderr)
		}
	}
}
