package js

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel"
)

// gcProbe exercises what node --expose-gc gives a program: the gc global
// and its property attributes, a WeakRef whose target a collection frees,
// a FinalizationRegistry callback that runs in a later macrotask (V8
// posts the cleanup as a platform task), and the async form.
const gcProbe = `
const d = Object.getOwnPropertyDescriptor(globalThis, 'gc');
console.log(typeof d.value, d.writable, d.enumerable, d.configurable, gc.name, gc.length);
let ref;
(function () { ref = new WeakRef({ big: new Array(1000).fill(1) }); })();
const fr = new FinalizationRegistry((held) => console.log('finalized', held));
(function () { fr.register({}, 'token'); })();
setTimeout(() => {
  console.log('sync result', gc());
  console.log('weakref cleared', ref.deref() === undefined);
  setTimeout(async () => {
    const p = gc({ execution: 'async' });
    console.log('async is a promise', p instanceof Promise);
    console.log('async result', await p);
  }, 10);
}, 0);
`

// TestExposeGC compares node --expose-gc with the host's node, and checks
// that without the flag a program has no gc global.
func TestExposeGC(t *testing.T) {
	hostNode, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("the test needs node on the host")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gc.js"), []byte(gcProbe), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := exec.Command(hostNode, "--expose-gc", filepath.Join(dir, "gc.js")).Output()
	if err != nil {
		t.Fatalf("host node: %v", err)
	}
	v := newVM(t, nil)
	v.writeFile("/workspace/gc.js", gcProbe)
	r := v.run("", "node", "--expose-gc", "gc.js")
	if r.code != 0 || r.stdout != string(want) {
		t.Errorf("exit %d\n--- secexec\n%s\n--- host node\n%s\n--- stderr\n%s", r.code, r.stdout, want, r.stderr)
	}
	r = v.run("", "node", "-p", "typeof globalThis.gc + ' ' + Object.keys(globalThis).includes('gc')")
	if r.code != 0 || r.stdout != "undefined false\n" {
		t.Errorf("without --expose-gc: exit %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
}

// TestExposeGCLoopIsCharged: a guest calling gc() in a loop spends only
// its own CPU budget: the collections run on the isolate's thread, which
// the kernel's CPUTime limit counts, so the loop ends with SIGXCPU (the
// parent, waiting, is not charged).
func TestExposeGCLoopIsCharged(t *testing.T) {
	e := newEngine(t, Config{})
	m := stressVM(t, e, kernel.Limits{CPUTime: 300 * time.Millisecond})
	st, out, errOut, err := spawnNode(m.Kernel, `
const r = require('child_process').spawnSync('node', ['--expose-gc', '-e', 'for (;;) gc()']);
console.log(r.signal);`, false)
	if err != nil || !st.Exited || st.Code != 0 || out != "SIGXCPU\n" {
		t.Fatalf("gc loop: %+v %q %q %v", st, out, errOut, err)
	}
}
