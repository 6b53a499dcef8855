package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
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
