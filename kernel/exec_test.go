package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// A runtime implementing execve resolves the new program by PATH and loads
// it through the same loaders a spawn uses, then runs it in place.
func TestResolveAndLoadProgram(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, goLoader{
		"target": func(ctx context.Context, p *kernel.Process) int { return 9 },
		"execer": func(ctx context.Context, p *kernel.Process) int {
			if _, err := p.ResolveExecutable(ctx, "missing", []string{"PATH=/bin"}); !errors.Is(err, errno.ENOENT) {
				write(ctx, p, 1, fmt.Sprintf("missing: %v;", err))
			}
			exe, err := p.ResolveExecutable(ctx, "target", []string{"PATH=/bin"})
			if err != nil {
				write(ctx, p, 1, fmt.Sprintf("resolve: %v", err))
				return 1
			}
			if exe.Path != "/bin/target" {
				write(ctx, p, 1, "path "+exe.Path)
			}
			prog, err := p.LoadProgram(ctx, exe)
			if err != nil {
				write(ctx, p, 1, fmt.Sprintf("load: %v", err))
				return 1
			}
			return prog.Run(ctx, p)
		},
	})
	st, out := run(t, k, "execer")
	if out != "" || !st.Exited || st.Code != 9 {
		t.Fatalf("status %+v, output %q", st, out)
	}
}

func TestLoadProgramUnknownFormat(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, goLoader{
		"probe": func(ctx context.Context, p *kernel.Process) int {
			exe, err := p.ResolveExecutable(ctx, "/bin/junk", nil)
			if err != nil {
				return 2
			}
			if _, err := p.LoadProgram(ctx, exe); !errors.Is(err, errno.ENOEXEC) {
				return 3
			}
			return 0
		},
	})
	writeFile(t, k.VFS(), "/bin/junk", "not a program\n", 0o755)
	if st, out := run(t, k, "probe"); !st.Exited || st.Code != 0 {
		t.Fatalf("status %+v, output %q", st, out)
	}
}

// The host spawns the VM's user from init (uid 0); a process of that user
// cannot give its children other ids.
func TestSpawnCreds(t *testing.T) {
	var childErr error
	k := newKernel(t, kernel.Limits{}, goLoader{
		"ids": func(ctx context.Context, p *kernel.Process) int {
			write(ctx, p, 1, fmt.Sprintf("%d:%d caller=%d", p.UID(), p.GID(), p.Caller().UID))
			return 0
		},
		"escalate": func(ctx context.Context, p *kernel.Process) int {
			_, childErr = p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"/bin/ids"}, Creds: &kernel.Creds{}})
			c, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"/bin/ids"}, Creds: &kernel.Creds{UID: 1000, GID: 1000}, Files: []vfs.File{}})
			if err != nil {
				return 1
			}
			_, st, _ := p.Wait(ctx, c.PID(), 0)
			return st.Code
		},
	})
	out, w := capture(t, k)
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"/bin/ids"}, Files: []vfs.File{nil, w}, Creds: &kernel.Creds{UID: 1000, GID: 1000}})
	w.DecRef()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.HostWait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "1000:1000 caller=1000" {
		t.Errorf("credentials %q", got)
	}
	p, err = k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"/bin/escalate"}, Files: []vfs.File{}, Creds: &kernel.Creds{UID: 1000, GID: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := p.HostWait(context.Background())
	if !errors.Is(childErr, errno.EPERM) || st.Code != 0 {
		t.Errorf("escalation: %v, status %+v", childErr, st)
	}
}

// A native executable (an npm package's prebuilt binary) is not an
// ENOEXEC the caller turns into a misleading error: it "runs", says in
// one line on stderr that native executables cannot run here, and exits
// 126 as a shell does for a command it cannot execute.
func TestNativeExecutableSaysSo(t *testing.T) {
	k := newKernel(t, kernel.Limits{}, goLoader{})
	for name, hdr := range map[string]string{
		"elf":   "\x7fELF\x02\x01\x01\x00",
		"macho": "\xcf\xfa\xed\xfe\x07\x00\x00\x01",
		"pe":    "MZ\x90\x00" + strings.Repeat("\x00", 0x38) + "\x80\x00\x00\x00" + strings.Repeat("\x00", 0x40) + "PE\x00\x00",
	} {
		writeFile(t, k.VFS(), "/bin/"+name, hdr+strings.Repeat("\x00", 64), 0o755)
		st, out := run(t, k, name)
		if !st.Exited || st.Code != 126 {
			t.Fatalf("%s: status %+v, want exit 126", name, st)
		}
		if strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "/bin/"+name+": cannot execute: a native ") ||
			!strings.Contains(out, "cannot run in the sandbox") {
			t.Fatalf("%s: stderr %q, want one line saying native executables cannot run", name, out)
		}
	}
	// Anything else still fails to load with ENOEXEC (a shell then runs
	// it as a script), also a text that happens to start with "MZ".
	for name, data := range map[string]string{"text": "plain text\n", "mz": "MZ is not a PE file" + strings.Repeat(" ", 80) + "\n"} {
		writeFile(t, k.VFS(), "/bin/"+name, data, 0o755)
		if _, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{name}, Env: []string{"PATH=/bin"}}); !errors.Is(err, errno.ENOEXEC) {
			t.Fatalf("%s: %v, want ENOEXEC", name, err)
		}
	}
}
