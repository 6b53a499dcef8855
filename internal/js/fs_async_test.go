package js

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// fs.readFile and fs.promises.readFile of a pipe wait for its writer
// without blocking the event loop: timers run meanwhile, as in Node.
func TestReadFileOfPipeKeepsLoopRunning(t *testing.T) {
	for _, code := range []string{
		`let ticks = 0; const iv = setInterval(() => ticks++, 10);
require('fs').readFile('/dev/stdin', 'utf8', (err, s) => { clearInterval(iv); console.log(err, JSON.stringify(s), ticks > 3) })`,
		`let ticks = 0; const iv = setInterval(() => ticks++, 10);
require('fs').promises.readFile(0).then((b) => { clearInterval(iv); console.log(null, JSON.stringify(b.toString()), ticks > 3) })`,
	} {
		v := newVM(t, nil)
		k := v.vm.Kernel
		inR, inW, err := k.NewPipe()
		if err != nil {
			t.Fatal(err)
		}
		outW, out := collect(k, t)
		errW, errOut := collect(k, t)
		p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{
			Argv: []string{"node", "-e", code}, Env: []string{"PATH=/usr/bin"}, Cwd: "/workspace",
			Files: []vfs.File{inR, outW, errW},
		})
		inR.DecRef()
		outW.DecRef()
		errW.DecRef()
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond)
		_, _ = inW.Write(context.Background(), []byte("late input"))
		inW.DecRef()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		st, err := p.HostWait(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if got := out(); st.ShellCode() != 0 || got != "null \"late input\" true\n" {
			t.Errorf("%s\nexit %d stdout %q stderr %s", code, st.ShellCode(), got, strings.TrimSpace(errOut()))
		}
	}
	// Files still read as before, errors as Node reports them.
	v := newVM(t, nil)
	v.writeFile("/workspace/f.txt", "content")
	r := v.node(`const fs = require('fs');
fs.readFile('f.txt', 'utf8', (e, s) => console.log(e, s));
fs.promises.readFile('missing').catch((e) => console.log(e.code));
fs.promises.open('f.txt').then((h) => h.readFile('utf8')).then((s) => console.log('handle', s));`)
	if r.code != 0 || r.stdout != "null content\nENOENT\nhandle content\n" {
		t.Errorf("files: %+v", r)
	}
}
