package wasm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/secexec/secexec/userland/internal/wasmbuild"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

func TestNames(t *testing.T) {
	if got := Names(); !slices.Equal(got, wasmbuild.Commands) {
		t.Fatalf("Names() = %v, want %v", got, wasmbuild.Commands)
	}
	for _, name := range Names() {
		b, ok := Module(name)
		if !ok || !bytes.HasPrefix(b, []byte("\x00asm")) {
			t.Errorf("Module(%q) is not a wasm module", name)
		}
		b[0] = 'X' // a copy: the embedded module is unchanged
	}
	if m := Modules(); len(m) != len(wasmbuild.Commands) || !bytes.HasPrefix(m["grep"], []byte("\x00asm")) {
		t.Errorf("Modules() = %d entries", len(m))
	}
	for _, bad := range []string{"", "nope", "../wasm/grep", "grep.wasm"} {
		if _, ok := Module(bad); ok {
			t.Errorf("Module(%q) found something", bad)
		}
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
	if _, ok := Module(cmds["bzcat"]); !ok {
		t.Error("the module of bzcat is not embedded")
	}
}

// TestWasmUpToDate rebuilds the modules and compares them with the
// committed ones, so a source change without "go generate ./userland"
// fails CI. The build is reproducible for a given Go toolchain version.
func TestWasmUpToDate(t *testing.T) {
	out := t.TempDir()
	if err := wasmbuild.Build(context.Background(), "..", out); err != nil {
		t.Fatal(err)
	}
	for _, name := range wasmbuild.Commands {
		fresh, err := os.ReadFile(filepath.Join(out, name+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		committed, ok := Module(name)
		if !ok {
			t.Fatalf("%s.wasm is not embedded", name)
		}
		if sha256.Sum256(fresh) != sha256.Sum256(committed) {
			t.Errorf("%s.wasm differs from a fresh build with %s: run go generate ./userland (the committed modules must be built with the toolchain CI uses)", name, runtime.Version())
		}
	}
}

// wasiRun runs an embedded command under wazero's own WASI with dir
// mounted as "/" and the working directory "/".
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
		WithFSConfig(wazero.NewFSConfig().WithDirMount(dir, "/"))
	ctx := context.Background()
	m, err := r.InstantiateModule(ctx, mod, cfg)
	code := 0
	var ee *sys.ExitError
	switch {
	case errors.As(err, &ee):
		code = int(ee.ExitCode())
	case err != nil:
		t.Fatalf("%v: %v", args, err)
	default:
		m.Close(ctx)
	}
	return stdout.String(), stderr.String(), code
}

func compile(t *testing.T, name string) (wazero.Runtime, wazero.CompiledModule) {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	t.Cleanup(func() { r.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	b, ok := Module(name)
	if !ok {
		t.Fatalf("no %s module", name)
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
