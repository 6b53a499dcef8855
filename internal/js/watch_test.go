package js

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// The event sequences of fs.watch, fs.promises.watch and fs.watchFile are
// compared with the host's Node by testdata/diff/fs_watch.js; these tests
// cover what a probe cannot: other writers, recursion, permissions,
// limits and the loop's lifetime.

func expectRun(t *testing.T, r result, want string) {
	t.Helper()
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d\n--- stdout\n%s\n--- want\n%s\n--- stderr\n%s", r.code, r.stdout, want, trunc(r.stderr))
	}
}

// waitForPath polls the VM's filesystem until path exists.
func waitForPath(t *testing.T, v *testVM, path string) {
	t.Helper()
	for i := 0; ; i++ {
		if _, err := v.vm.VFS.Stat(context.Background(), vfs.Root, path); err == nil {
			return
		}
		if i > 6000 {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFSWatchOtherWriters: changes made by another process of the VM and
// by the host (writing through the VFS as vm.FS() does) reach a watcher,
// and the watcher alone keeps its process running until it closes.
func TestFSWatchOtherWriters(t *testing.T) {
	v := newVM(t, nil)
	mkdir(t, v, "/workspace/w")
	done := make(chan result, 1)
	go func() {
		done <- v.node(`
const fs = require('fs');
const { execFileSync } = require('child_process');
const seen = new Set();
const w = fs.watch('w', (e, f) => {
  seen.add(e + ' ' + f);
  if (f === 'from-host' && e === 'change') { w.close(); console.log([...seen].sort().join('\n')); }
});
execFileSync(process.execPath, ['-e', "require('fs').writeFileSync('w/from-child', 'x')"]);
fs.writeFileSync('w/ready', '');
`)
	}()
	waitForPath(t, v, "/workspace/w/ready")
	v.writeFile("/workspace/w/from-host", "h")
	expectRun(t, <-done, "change from-child\nchange from-host\nrename from-child\nrename from-host\nrename ready\n")
}

// TestFSWatchRecursive: a recursive watcher names entries by their path
// below the watched directory, and follows directories created later.
func TestFSWatchRecursive(t *testing.T) {
	v := newVM(t, nil)
	r := v.node(`
const fs = require('fs');
fs.mkdirSync('r/a', { recursive: true });
const out = [];
const w = fs.watch('r', { recursive: true }, (e, f) => {
  out.push(e + ' ' + f);
  if (f === 'end') { w.close(); console.log(out.join('\n')); }
});
fs.writeFileSync('r/a/x', '1');
fs.mkdirSync('r/a/new');
fs.writeFileSync('r/a/new/deep', '');
fs.renameSync('r/a/x', 'r/y');
fs.rmSync('r/a', { recursive: true });
fs.writeFileSync('r/end', '');
`)
	expectRun(t, r, `rename a/x
change a/x
rename a/new
rename a/new/deep
rename a/x
rename y
rename a/new/deep
rename a/new
rename a
rename end
`)
}

// TestFSWatchPermission: watching needs read permission from the policy;
// a recursive watcher does not hear of directories it may not read.
func TestFSWatchPermission(t *testing.T) {
	e := engine(t)
	pol := policy.AllowAll()
	pol.FS = append(pol.FS, policy.FSRule{Effect: policy.Deny, Ops: policy.ReadOps(), Paths: []string{"/workspace/secret", "/workspace/secret/**"}})
	m, err := vm.New(context.Background(), vm.Config{Policy: pol, Lowers: []vfs.FileSystem{e.Layer()}})
	if err != nil {
		t.Fatal(err)
	}
	m.Kernel.RegisterLoader(e.Loader())
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	v := &testVM{t: t, vm: m, e: e}
	mkdir(t, v, "/workspace/secret")
	r := v.node(`
const fs = require('fs');
try { fs.watch('secret') } catch (e) { console.log(e.code, e.syscall, e.filename) }
try { fs.watchFile('secret', () => {}); console.log('watchFile polls') } catch (e) { console.log(e.code) }
fs.unwatchFile('secret');
const out = [];
const w = fs.watch('.', { recursive: true }, (e, f) => {
  out.push(e + ' ' + f);
  if (f === 'end') { w.close(); console.log(out.join('\n')); }
});
fs.writeFileSync('secret/hidden', 'x');
fs.writeFileSync('end', '');
`)
	expectRun(t, r, "EACCES watch secret\nwatchFile polls\nrename end\n")
}

// TestFSWatchLifetime: a persistent watcher keeps the loop alive, an
// unreferenced or closed one does not; closing emits 'close'; an
// AbortSignal closes the watcher.
func TestFSWatchLifetime(t *testing.T) {
	v := newVM(t, nil)
	r := v.node(`
const fs = require('fs');
const a = fs.watch('.', { persistent: false });
const b = fs.watch('.');
b.unref();
const ac = new AbortController();
const c = fs.watch('.', { signal: ac.signal });
c.on('close', () => console.log('c closed'));
ac.abort();
const d = fs.watchFile('x', { interval: 1 }, () => {});
d.unref();
process.on('exit', () => console.log('exit'));
`)
	expectRun(t, r, "c closed\nexit\n")
	// A referenced watcher keeps its process until it is killed, even
	// once its file is gone and it will hear nothing more (as in Node).
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	k := v.vm.Kernel
	p, err := k.SpawnHost(ctx, kernel.SpawnOptions{
		Argv: []string{"node", "-e", "const fs = require('fs'); fs.writeFileSync('gone', ''); fs.watch('gone'); fs.unlinkSync('gone')"}, Cwd: "/workspace", Files: []vfs.File{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.HostWait(ctx); err == nil {
		t.Fatal("a process with a persistent watcher exited by itself")
	}
	_ = p.Signal(9)
	if st, err := p.HostWait(context.Background()); err != nil || st.Exited {
		t.Fatalf("after kill: %+v %v", st, err)
	}
}

// TestFSWatchLimits: a process holds at most 8192 watches (ENOSPC with
// Node's message), and a flood of events beyond the kernel's queue bound
// reaches the watcher as ('rename', null).
func TestFSWatchLimits(t *testing.T) {
	v := newVM(t, nil)
	r := v.node(`
const fs = require('fs');
const ws = [];
for (let i = 0; i < 8193; i++) fs.mkdirSync('d' + i);
let err;
try { for (let i = 0; i < 8193; i++) ws.push(fs.watch('d' + i)); } catch (e) { err = e; }
console.log(ws.length, err.code, err.message);
for (const w of ws) w.close();
ws.length = 0;
const again = fs.watch('d8192');
again.close();
for (let i = 0; i < 8193; i++) fs.rmdirSync('d' + i);
fs.mkdirSync('flood');
let events = 0, lost = 0;
const w = fs.watch('flood', (e, f) => {
  // The overflow is seen once the queued events are: only then is there
  // room for the last event.
  if (f === null) { lost++; fs.writeFileSync('flood/end', ''); } else events++;
  if (f === 'end') { w.close(); console.log(lost > 0, events < 10000); }
});
for (let i = 0; i < 5000; i++) fs.writeFileSync('flood/' + i, 'x');
`)
	expectRun(t, r, "8192 ENOSPC ENOSPC: System limit for number of file watchers reached, watch 'd8192'\ntrue true\n")
}

// TestFSWatchGuestClosesSet: a guest closing the watch set's descriptor
// under the runtime gets a new set for its next watcher.
func TestFSWatchGuestClosesSet(t *testing.T) {
	v := newVM(t, nil)
	r := v.node(`
const fs = require('fs');
const w = fs.watch('.');
for (let fd = 3; fd < 64; fd++) { try { fs.closeSync(fd) } catch {} }
const w2 = fs.watch('.', (e, f) => { if (f === 'after') { console.log(e, f); w.close(); w2.close(); } });
fs.writeFileSync('after', '');
`)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "rename after\n") {
		t.Fatalf("exit %d stdout %q stderr %s", r.code, r.stdout, trunc(r.stderr))
	}
}
