package js

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/wasm"
	"github.com/secexec/secexec/kernel/vfs"
)

// node and a WebAssembly guest in one VM do the same readv, writev and
// spawn with stdout and stderr sent to one file, and statfs, and print the same
// lines: the vectored I/O and the file actions are the kernel's, not each
// runtime's own.
func TestIOParityWithWASM(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "iovparity.wasm")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/iovparity")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the guest: %v\n%s", err, out)
	}
	prog, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eng, err := wasm.NewEngine(ctx, wasm.Config{CacheDir: filepath.Join(os.TempDir(), "secexec-test-wasm-cache")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close(context.Background()) })
	v := newVM(t, nil)
	v.vm.Kernel.RegisterLoader(eng.Loader())
	f, err := v.vm.VFS.Open(ctx, vfs.Root, "/workspace/iovparity.wasm", vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	for b := prog; len(b) > 0; {
		n, err := f.Write(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		b = b[n:]
	}
	f.DecRef()
	v.writeFile("/workspace/pv", "abcdefgh")

	guest := v.run("", "/workspace/iovparity.wasm")
	if guest.code != 0 {
		t.Fatalf("guest: code %d, stdout %q, stderr %s", guest.code, guest.stdout, guest.stderr)
	}
	js := v.node(`const fs = require('fs'), cp = require('child_process');
const log = (...a) => process.stdout.write(a.join(' ') + '\n');
const fd = fs.openSync('/workspace/pv', 'r');
const a = Buffer.alloc(3), b = Buffer.alloc(0), c = Buffer.alloc(10);
const n = fs.readvSync(fd, [a, b, c]);
log('readv', n, a.toString() + '|' + c.subarray(0, n - 3).toString());
const w = fs.openSync('/workspace/pw', 'w+');
log('writev', fs.writevSync(w, [Buffer.from('ab'), Buffer.alloc(0), Buffer.from('cd')]));
log('pwritev', fs.writevSync(w, [Buffer.from('Z')], 1));
log('file', fs.readFileSync('/workspace/pw', 'utf8'));
try { fs.readvSync(99, []); log('badf none'); } catch (e) { log('badf', e.code); }
const sf = fs.statfsSync('/workspace');
log('statfs', sf.bsize * sf.blocks, sf.files);
const o = fs.openSync('/workspace/pc', 'w');
const r = cp.spawnSync('/workspace/iovparity.wasm', ['child'], {stdio: ['ignore', o, o]});
log('child', r.status, fs.readFileSync('/workspace/pc', 'utf8'));
`)
	if js.code != 0 {
		t.Fatalf("node: code %d, stdout %q, stderr %s", js.code, js.stdout, js.stderr)
	}
	const want = "readv 8 abc|defgh\nwritev 4\npwritev 1\nfile aZcd\nbadf EBADF\nstatfs * *\nchild 0 out err\n"
	if !matchLines(guest.stdout, want) || guest.stdout != js.stdout {
		t.Errorf("guest printed\n%s\nnode printed\n%s\nwant\n%s", guest.stdout, js.stdout, want)
	}
	t.Logf("both printed:\n%s", js.stdout)
}

// matchLines reports whether got has want's lines, where a "*" word
// stands for any one word.
func matchLines(got, want string) bool {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	if len(g) != len(w) {
		return false
	}
	for i := range w {
		gw, ww := strings.Fields(g[i]), strings.Fields(w[i])
		if len(gw) != len(ww) {
			return false
		}
		for j := range ww {
			if ww[j] != "*" && ww[j] != gw[j] {
				return false
			}
		}
	}
	return true
}

// node reads every stdio source from the parent's table at once, so
// stdio [.., 2, 1] swaps stdout and stderr even though the kernel runs
// file actions one after another (liftSources).
func TestSpawnStdioSwap(t *testing.T) {
	v := newVM(t, nil)
	r := v.node(`require('child_process').spawnSync('node', ['-e', 'process.stdout.write("O"); process.stderr.write("E")'], {stdio: ['ignore', 2, 1]});`)
	if r.code != 0 || r.stdout != "E" || r.stderr != "O" {
		t.Errorf("code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
