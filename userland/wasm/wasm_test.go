package wasm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/software"
	"github.com/secexec/secexec/userland/internal/wasmbuild"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// testCache is the cache root the repository's test binaries share, so
// the modules are built once per machine (internal/vmtest uses it too).
var testCache = filepath.Join(os.TempDir(), "secexec-test-cache")

// built returns the directory of this source's modules, building them on
// first use.
func built(t *testing.T) string {
	t.Helper()
	dir, err := Ensure(context.Background(), testCache, nil)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestEnsureBuildsEveryModuleOnce(t *testing.T) {
	dir := built(t)
	want, err := Dir(testCache)
	if err != nil || dir != want {
		t.Fatalf("Ensure = %s, Dir = %s, %v", dir, want, err)
	}
	mtimes := map[string]time.Time{}
	for _, name := range Names() {
		b, err := Module(dir, name)
		if err != nil || !bytes.HasPrefix(b, []byte("\x00asm")) {
			t.Fatalf("Module(%q): not a wasm module (%v)", name, err)
		}
		fi, err := os.Stat(filepath.Join(dir, name+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s.wasm has mode %v: modules are data, not host executables", name, fi.Mode())
		}
		mtimes[name] = fi.ModTime()
	}
	again, err := Ensure(context.Background(), testCache, nil)
	if err != nil || again != dir {
		t.Fatalf("second Ensure = %s, %v", again, err)
	}
	for _, name := range Names() {
		fi, _ := os.Stat(filepath.Join(dir, name+".wasm"))
		if !fi.ModTime().Equal(mtimes[name]) {
			t.Errorf("%s.wasm was rebuilt by a second Ensure of the same source", name)
		}
	}
	for _, bad := range []string{"", "nope", "../wasm/grep", "grep.wasm", "xxd"} {
		if _, err := Module(dir, bad); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Module(%q) = %v, want fs.ErrNotExist", bad, err)
		}
	}
}

func TestInstallFromIncompleteDirIsTyped(t *testing.T) {
	empty := t.TempDir()
	if err := Install(nopStore{}, empty); !errors.Is(err, ErrNotBuilt) {
		t.Fatalf("Install(empty dir) = %v, want ErrNotBuilt", err)
	}
	t.Setenv(EnvDir, empty)
	if dir, err := Dir(testCache); err != nil || dir != empty {
		t.Fatalf("Dir with %s set = %s, %v", EnvDir, dir, err)
	}
	if _, err := Ensure(context.Background(), testCache, nil); !errors.Is(err, ErrNotBuilt) {
		t.Fatalf("Ensure with an empty %s = %v, want ErrNotBuilt (a prebuilt directory is never built into)", EnvDir, err)
	}
}

// Without Go on PATH, a source that needs a build fails with a typed
// error and leaves no build behind.
func TestEnsureWithoutGoIsTyped(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("PATH", t.TempDir())
	if _, err := Ensure(context.Background(), cache, nil); !errors.Is(err, ErrNoToolchain) {
		t.Fatalf("Ensure without go = %v, want ErrNoToolchain", err)
	}
	dir, _ := Dir(cache)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed build left %s (%v)", dir, err)
	}
}

type nopStore struct{}

func (nopStore) Register(name string, wasm []byte) (software.Command, error) {
	return software.Command{Name: name}, nil
}
func (nopStore) Alias(name, target string) (software.Command, error) {
	return software.Command{}, software.ErrNotFound
}

func TestDigestFollowsTheBuildInputsOnly(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example\n")
	write("go.sum", "")
	write("userland/a/a.go", "package a\n")
	write("userland/a/a_test.go", "package a\n")
	write("userland/a/testdata/x", "x")
	write("userland/wasm/wasm.go", "package wasm\n")
	digest := func() string {
		t.Helper()
		d, err := Digest(root)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d0 := digest()
	for _, same := range [][2]string{
		{"userland/a/a_test.go", "package a // changed\n"},
		{"userland/a/testdata/x", "y"},
		{"userland/wasm/wasm.go", "package wasm // changed\n"},
		{"userland/wasm/grep.wasm", "\x00asm"},
	} {
		write(same[0], same[1])
		if d := digest(); d != d0 {
			t.Errorf("changing %s changed the digest", same[0])
		}
	}
	for _, changed := range [][2]string{
		{"userland/a/a.go", "package a // changed\n"},
		{"userland/b/b.go", "package b\n"},
		{"go.sum", "example.com/x v1.0.0 h1:x\n"},
		{"go.mod", "module example\n\ngo 1.26\n"},
	} {
		write(changed[0], changed[1])
		if d := digest(); d == d0 {
			t.Errorf("changing %s left the digest as it was", changed[0])
		} else {
			d0 = d
		}
	}
	if _, err := Digest(t.TempDir()); err == nil {
		t.Error("Digest of a directory without go.mod succeeded")
	}
}

func TestPruneKeepsTheNewestBuilds(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	var dirs []string
	for i := range 6 {
		d := filepath.Join(root, fmt.Sprintf("b%d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		// b0 is the newest.
		if err := os.Chtimes(d, now, now.Add(-time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	if err := os.Mkdir(filepath.Join(root, ".build-x"), 0o755); err != nil {
		t.Fatal(err)
	}
	list := func() []string {
		var left []string
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			left = append(left, e.Name())
		}
		return left
	}
	// Builds used in the last 2.5 hours stay, however many.
	prune(root, dirs[5], 3, now.Add(-150*time.Minute))
	if left, want := list(), []string{".build-x", "b0", "b1", "b2", "b5"}; !slices.Equal(left, want) {
		t.Errorf("after prune: %v, want %v", left, want)
	}
	prune(root, dirs[5], 3, now) // the one in use is the oldest
	if left, want := list(), []string{".build-x", "b0", "b1", "b5"}; !slices.Equal(left, want) {
		t.Errorf("after prune: %v, want %v", left, want)
	}
}

func TestCommands(t *testing.T) {
	cmds := Commands()
	for _, name := range Names() {
		if cmds[name] != name {
			t.Errorf("Commands()[%q] = %q, want the module itself", name, cmds[name])
		}
	}
	for module, aliases := range wasmbuild.Aliases {
		for _, alias := range aliases {
			if cmds[alias] != module {
				t.Errorf("Commands()[%q] = %q, want %q", alias, cmds[alias], module)
			}
		}
	}
	aliases := 0
	for _, l := range wasmbuild.Aliases {
		aliases += len(l)
	}
	if cmds["xxd"] != "tools" || cmds["patch"] != "tools" || cmds["sh"] != "bash" || cmds["wget"] != "curl" || len(cmds) != len(Names())+aliases {
		t.Errorf("Commands() = %v", cmds)
	}
}

// wasiRun runs a command module (a reactor: _initialize, then
// secexec_main, as secexec's engine does) under wazero's own WASI with dir
// mounted as "/" and the working directory "/": the modules need no host
// module of secexec's to run.
func wasiRun(t *testing.T, r wazero.Runtime, mod wazero.CompiledModule, dir, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithArgs(args...).
		WithEnv("PWD", "/").
		WithStdin(strings.NewReader(stdin)).
		WithStdout(&stdout).
		WithStderr(&stderr).
		WithFSConfig(wazero.NewFSConfig().WithDirMount(dir, "/")).
		WithStartFunctions("_initialize")
	ctx := context.Background()
	m, err := r.InstantiateModule(ctx, mod, cfg)
	if err != nil {
		t.Fatalf("%v: instantiate: %v", args, err)
	}
	defer m.Close(ctx)
	main := m.ExportedFunction("secexec_main")
	if main == nil {
		t.Fatalf("%v: the module exports no secexec_main", args)
	}
	code := 0
	var ee *sys.ExitError
	res, err := main.Call(ctx)
	switch {
	case errors.As(err, &ee):
		code = int(ee.ExitCode())
	case err != nil:
		t.Fatalf("%v: %v", args, err)
	default:
		code = int(res[0])
	}
	return stdout.String(), stderr.String(), code
}

func compile(t *testing.T, name string) (wazero.Runtime, wazero.CompiledModule) {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	t.Cleanup(func() { r.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	b, err := Module(built(t), name)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := r.CompileModule(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	return r, mod
}

func TestGrepWasm(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"a.txt":       "foo\nbar\n",
		"d/sub/y.txt": "y foo\nno\n",
		"d/x.go":      "x\nfoo x\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, mod := compile(t, "grep")
	tests := []struct {
		args   []string
		stdin  string
		out    string
		errOut string
		code   int
	}{
		{args: []string{"grep", "-rn", "foo", "."}, out: "./a.txt:1:foo\n./d/sub/y.txt:1:y foo\n./d/x.go:2:foo x\n"},
		{args: []string{"grep", "-r", "foo"}, out: "a.txt:foo\nd/sub/y.txt:y foo\nd/x.go:foo x\n"},
		{args: []string{"grep", "-c", "o", "d/x.go", "/a.txt"}, out: "d/x.go:1\n/a.txt:1\n"},
		{args: []string{"grep", "-i", "BAR"}, stdin: "x\nBar\n", out: "Bar\n"},
		{args: []string{"grep", "zzz", "a.txt"}, code: 1},
		{args: []string{"grep", "foo", "missing"}, errOut: "grep: missing: No such file or directory\n", code: 2},
	}
	for _, tc := range tests {
		out, errOut, code := wasiRun(t, r, mod, dir, tc.stdin, tc.args...)
		if out != tc.out || errOut != tc.errOut || code != tc.code {
			t.Errorf("%v: got (%q, %q, %d), want (%q, %q, %d)", tc.args, out, errOut, code, tc.out, tc.errOut, tc.code)
		}
	}
}

func TestJQWasm(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.json"), []byte(`{"a":{"b":[1,2]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r, mod := compile(t, "jq")
	tests := []struct {
		args   []string
		stdin  string
		out    string
		errOut string
		code   int
	}{
		{args: []string{"jq", ".a"}, stdin: `{"a":1}`, out: "1\n"},
		{args: []string{"jq", "-c", ".a", "in.json"}, out: "{\"b\":[1,2]}\n"},
		{args: []string{"jq", ".a.b[1]", "/in.json"}, out: "2\n"},
		{args: []string{"jq", "-r", ".[]"}, stdin: `["x","y"]`, out: "x\ny\n"},
		{args: []string{"jq", ".a.b"}, stdin: "{\"a\":1}\n", errOut: "jq: error (at <stdin>:1): expected an object but got: number (1)\n", code: 5},
		{args: []string{"jq", "-e", ".x"}, stdin: "{}", out: "null\n", code: 1},
	}
	for _, tc := range tests {
		out, errOut, code := wasiRun(t, r, mod, dir, tc.stdin, tc.args...)
		if out != tc.out || errOut != tc.errOut || code != tc.code {
			t.Errorf("%v: got (%q, %q, %d), want (%q, %q, %d)", tc.args, out, errOut, code, tc.out, tc.errOut, tc.code)
		}
	}
}
