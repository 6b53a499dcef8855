package pysupport_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/pysupport"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
	"github.com/secexec/secexec/software"
)

// The bytecode files that the tests below look at.
const (
	jsonPyc   = pysupport.StdlibDir + "/json/__init__.pyc"
	socketPyc = software.PythonSupportDir + "/__pycache__/socket.cpython-312.pyc"
)

// python3 imports the standard library from the bytecode directory and
// the support files from their pycs: the pycs are valid (CPython neither
// recompiles nor rewrites them) and the zip is not read.
func TestBytecodeUsed(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, vmhost.Config{})
	r := run(t, h, "", "python3", "-c", `import sys, json, socket, subprocess, sitecustomize
print(json.__spec__.origin)
print(socket.__spec__.cached, type(socket.__spec__.loader).__name__)
print(subprocess.run(["echo", "hi"], capture_output=True, text=True).stdout.strip())
print([m for m in sys.modules if m == "zipfile"])`)
	want := jsonPyc + "\n" + socketPyc + " SourceFileLoader\nhi\n[]\n"
	if r.exit.Code != 0 || r.stdout != want {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant stdout:\n%s", r.exit.Code, r.stdout, r.stderr, want)
	}
	for _, p := range []string{socketPyc, jsonPyc} {
		st, err := h.Stat(ctx, p, true)
		if err != nil {
			t.Fatal(err)
		}
		// The layer's files are from the epoch; a pyc CPython found
		// stale would have been rewritten, now, into the VM's overlay.
		if st.Mtime.Unix() != 0 {
			t.Errorf("%s was rewritten (mtime %v): the layer's pyc was not used", p, st.Mtime)
		}
	}
}

// A guest that plants bytecode in the shared directories changes only its
// own VM: another VM of the same runtime imports the original, and reads
// the same bytes it did before the plant.
func TestBytecodeGuestCannotChangeShared(t *testing.T) {
	ctx := context.Background()
	victim := newHost(t, vmhost.Config{})
	before := map[string][]byte{}
	for _, p := range []string{jsonPyc, socketPyc} {
		b, err := victim.ReadFile(ctx, p, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		before[p] = b
	}
	attacker := newHost(t, vmhost.Config{})
	plant := `import sys, marshal, importlib.util
code = marshal.dumps(compile('print("planted")', "x", "exec"))
for p in sys.argv[1:]:
    try:
        with open(p, "wb") as f:
            f.write(importlib.util.MAGIC_NUMBER + bytes(12) + code)
    except PermissionError:
        print("refused", p)
`
	// The guest's user may not write there at all.
	if r := run(t, attacker, "", "python3", "-c", plant, jsonPyc, socketPyc, "/tmp/plant.pyc"); r.stdout != "refused "+jsonPyc+"\nrefused "+socketPyc+"\n" {
		t.Fatalf("guest writes to the bytecode directories: exit %d, %q %q", r.exit.Code, r.stdout, r.stderr)
	}
	// The VM's owner may, through the file API (root in its VM): the write
	// lands in this VM's overlay, and this VM loads the plant, which is
	// what makes the checks of the other VMs meaningful.
	planted, err := attacker.ReadFile(ctx, "/tmp/plant.pyc", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{jsonPyc, socketPyc} {
		if err := attacker.WriteFile(ctx, p, planted, 0o644); err != nil {
			t.Fatalf("owner's write of %s: %v", p, err)
		}
	}
	if r := run(t, attacker, "", "python3", "-c", "import json"); r.stdout != "planted\n" {
		t.Fatalf("the attacker's own VM did not load its plant: %q %q", r.stdout, r.stderr)
	}
	// socket's pyc is checked against its source: a plant is recompiled
	// away even in the attacker's VM.
	if r := run(t, attacker, "", "python3", "-c", "import socket; print(socket.AF_INET.name)"); r.stdout != "AF_INET\n" {
		t.Fatalf("checked pyc: a planted socket pyc was loaded: %q %q", r.stdout, r.stderr)
	}
	r := run(t, victim, "", "python3", "-c", "import json, socket; print(json.dumps([1]), socket.AF_INET.name)")
	if r.exit.Code != 0 || r.stdout != "[1] AF_INET\n" {
		t.Fatalf("victim VM: exit %d\nstdout:\n%s\nstderr:\n%s", r.exit.Code, r.stdout, r.stderr)
	}
	fresh := newHost(t, vmhost.Config{})
	for p, want := range before {
		for _, h := range []*vmhost.Host{victim, fresh} {
			b, err := h.ReadFile(ctx, p, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, want) {
				t.Fatalf("%s changed in another VM after the attacker's plant", p)
			}
		}
	}
}

// EnsureBytecode builds once per fingerprint: a second call loads what
// the first stored, and a changed support source builds anew, with the
// change compiled in.
func TestBytecodeBuildInvalidates(t *testing.T) {
	ctx := context.Background()
	rt := vmtest.Shared(t)
	dir := t.TempDir()
	opts := pysupport.BytecodeOptions{Dir: dir, Engine: rt.Engine, Store: rt.Store}
	first, fresh, err := pysupport.EnsureBytecode(ctx, opts)
	if err != nil || !fresh {
		t.Fatalf("first build: fresh %v, %v", fresh, err)
	}
	if first.Len() < 400 {
		t.Fatalf("first build: %d files, want the standard library's (460) and the support files'", first.Len())
	}
	again, fresh, err := pysupport.EnsureBytecode(ctx, opts)
	if err != nil || fresh || again.Fingerprint != first.Fingerprint {
		t.Fatalf("second call: fresh %v, fingerprint %s vs %s, %v", fresh, again.Fingerprint, first.Fingerprint, err)
	}
	site := software.PythonSupportDir + "/__pycache__/sitecustomize.cpython-312.pyc"
	if !bytes.Equal(again.FileForTest(site), first.FileForTest(site)) || len(first.FileForTest(site)) == 0 {
		t.Fatal("the loaded set differs from the built one")
	}
	restore := pysupport.SetSiteCustomizeForTest([]byte("SECEXEC_CHANGED_SOURCE = 1\n"))
	defer restore()
	changed, fresh, err := pysupport.EnsureBytecode(ctx, opts)
	if err != nil || !fresh || changed.Fingerprint == first.Fingerprint {
		t.Fatalf("changed source: fresh %v, fingerprint %s vs %s, %v", fresh, changed.Fingerprint, first.Fingerprint, err)
	}
	if !bytes.Contains(changed.FileForTest(site), []byte("SECEXEC_CHANGED_SOURCE")) {
		t.Fatal("the rebuilt sitecustomize pyc does not hold the changed source")
	}
}

// Every python3 process draws its own hash seed and random bytes: nothing
// that set-up prepared once (the bytecode) or that a later pre-initialised
// image of the module restores may carry them from one process to the next.
func TestPythonProcessesDoNotShareSeeds(t *testing.T) {
	h := newHost(t, vmhost.Config{})
	prog := "import os; print(hash('x'), os.urandom(16).hex())"
	seen := map[string]bool{}
	for i := range 4 {
		r := run(t, h, "", "python3", "-c", prog)
		if r.exit.Code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, r.exit.Code, r.stderr)
		}
		for _, f := range strings.Fields(r.stdout) {
			if seen[f] {
				t.Fatalf("run %d repeats %q (hash seed or urandom shared between processes)", i, f)
			}
			seen[f] = true
		}
	}
	if len(seen) != 8 {
		t.Fatalf("want 8 distinct values, got %v", seen)
	}
}
