package js_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/guest"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel/policy"
)

// TestFSWatchShellAndSDK runs the whole stack (the userland's shell, the
// V8 engine, the host API): a node watcher hears of a file the shell it
// spawned wrote (`sh -c 'echo x > f'`, a WebAssembly program) and of one
// the host wrote through the VM's filesystem API.
func TestFSWatchShellAndSDK(t *testing.T) {
	ctx := context.Background()
	rt, err := guest.New(ctx, guest.Config{
		SoftwareDir: filepath.Join(os.TempDir(), "secexec-test-software"),
		CacheDir:    filepath.Join(os.TempDir(), "secexec-test-cache"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	h, err := vmhost.New(ctx, vmhost.Config{Policy: policy.AllowAll(), Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	if err := h.Mkdir(ctx, "w", 0o755); err != nil {
		t.Fatal(err)
	}
	type out struct {
		exit       *vmhost.Exit
		err        error
		out, errut string
	}
	done := make(chan out, 1)
	go func() {
		var so, se bytes.Buffer
		exit, err := h.Run(ctx, vmhost.RunSpec{
			Argv: []string{"node", "-e", `
const fs = require('fs');
const { execSync } = require('child_process');
const seen = new Set();
const w = fs.watch('w', (e, f) => {
  seen.add(e + ' ' + f);
  // The host writes once it sees w/ready, which can be before this
  // watcher got the event of ready: wait for both.
  if (seen.has('change from-host') && seen.has('rename ready')) { w.close(); console.log([...seen].sort().join('\n')); }
});
execSync("sh -c 'echo x > w/from-sh'");
fs.writeFileSync('w/ready', '');
`},
			Env:    []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/user"},
			Stdout: &so, Stderr: &se,
			Timeout: 2 * time.Minute,
		})
		done <- out{exit, err, so.String(), se.String()}
	}()
	for i := 0; ; i++ {
		if _, err := h.Stat(ctx, "w/ready", true); err == nil {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("the watcher ended early: %+v %v\n%s\n%s", r.exit, r.err, r.out, r.errut)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := h.WriteFile(ctx, "w/from-host", []byte("h"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.exit.Code != 0 {
		t.Fatalf("%+v %v\n%s", r.exit, r.err, r.errut)
	}
	// The shell's redirection creates and writes the file; the host's
	// write creates it, gives it to the guest user (chown) and writes.
	want := "change from-host\nchange from-sh\nrename from-host\nrename from-sh\nrename ready\n"
	if r.out != want {
		t.Fatalf("events:\n%s\nwant:\n%s\nstderr: %s", r.out, want, r.errut)
	}
}
