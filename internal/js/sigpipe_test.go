package js

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// Node ignores SIGPIPE: writing to a pipe nobody reads fails with EPIPE
// instead of killing the process. (That its children get the default
// back is tested in the root package, where sh is installed.)
func TestNodeIgnoresSIGPIPE(t *testing.T) {
	v := newVM(t, nil)
	k := v.vm.Kernel
	r, w, err := k.NewPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.DecRef() // no reader: every write is EPIPE
	errW, errOut := collect(k, t)
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{
		Argv: []string{"node", "-e", `const fs = require('fs');
try { fs.writeSync(1, 'x') } catch (e) { fs.writeSync(2, e.code + '\n') }
process.stdout.write('y\n');
console.log('z');
fs.writeSync(2, 'alive\n')`},
		Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/workspace",
		Files: []vfs.File{nil, w, errW},
	})
	w.DecRef()
	errW.DecRef()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := p.HostWait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := errOut(); st.ShellCode() != 0 || !strings.HasPrefix(got, "EPIPE\n") || !strings.HasSuffix(got, "alive\n") {
		t.Fatalf("status %+v stderr %q", st, got)
	}

}
