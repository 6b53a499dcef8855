// Package vmhosttest provides a vmhost.Runtime with a few small programs
// written in Go, for tests of the layers above the kernel (the API, the
// engine and its protocol) that need processes which write, read and
// exit on cue before — and independently of — the WASM userland.
//
// It is test support only: its programs run on host goroutines, which
// real guest code never does.
package vmhosttest

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/secexec/secexec/internal/layerfs"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// magic starts every test program file: "#!vmhosttest NAME\n".
const magic = "#!vmhosttest "

// Programs, by name, each installed as /usr/bin/NAME (the prefix keeps
// them clear of the real userland's names):
//
//	vt-exit N            exit with status N
//	vt-echo ARGS...      print ARGS joined by spaces and a newline
//	vt-cat               copy stdin to stdout
//	vt-spew N [FD]       write N bytes (a repeating 0..255 pattern) to FD (default 1)
//	vt-bytes             write every byte value 0..255 to stdout and "err\n" to stderr
//	vt-sleep             block until killed
//	vt-env, vt-pwd       print the environment, the working directory
//	vt-count             read stdin to EOF, print the number of bytes read
var programs = map[string]func(ctx context.Context, p *kernel.Process, args []string) int{
	"vt-exit": func(_ context.Context, _ *kernel.Process, args []string) int {
		if len(args) < 1 {
			return 2
		}
		n, _ := strconv.Atoi(args[0])
		return n
	},
	"vt-echo": func(ctx context.Context, p *kernel.Process, args []string) int {
		return status(writeAll(ctx, p, 1, []byte(strings.Join(args, " ")+"\n")))
	},
	"vt-cat": func(ctx context.Context, p *kernel.Process, _ []string) int {
		buf := make([]byte, 32<<10)
		for {
			n, err := p.Read(ctx, 0, buf)
			if n > 0 {
				if err := writeAll(ctx, p, 1, buf[:n]); err != nil {
					return 1
				}
			}
			if n == 0 || err != nil {
				return status(err)
			}
		}
	},
	"vt-spew": func(ctx context.Context, p *kernel.Process, args []string) int {
		if len(args) < 1 {
			return 2
		}
		n, err := strconv.ParseInt(args[0], 10, 64)
		if err != nil {
			return 2
		}
		fd := 1
		if len(args) > 1 {
			fd, _ = strconv.Atoi(args[1])
		}
		chunk := Pattern(32 << 10)
		for n > 0 {
			c := chunk[:min(int64(len(chunk)), n)]
			if err := writeAll(ctx, p, fd, c); err != nil {
				return 1
			}
			n -= int64(len(c))
		}
		return 0
	},
	"vt-bytes": func(ctx context.Context, p *kernel.Process, _ []string) int {
		if err := writeAll(ctx, p, 1, Pattern(256)); err != nil {
			return 1
		}
		return status(writeAll(ctx, p, 2, []byte("err\n")))
	},
	"vt-sleep": func(ctx context.Context, _ *kernel.Process, _ []string) int {
		<-ctx.Done()
		return 1
	},
	"vt-env": func(ctx context.Context, p *kernel.Process, _ []string) int {
		return status(writeAll(ctx, p, 1, []byte(strings.Join(p.Environ(), "\n")+"\n")))
	},
	"vt-pwd": func(ctx context.Context, p *kernel.Process, _ []string) int {
		return status(writeAll(ctx, p, 1, []byte(p.Cwd()+"\n")))
	},
	"vt-count": func(ctx context.Context, p *kernel.Process, _ []string) int {
		buf := make([]byte, 32<<10)
		total := 0
		for {
			n, err := p.Read(ctx, 0, buf)
			total += n
			if n == 0 || err != nil {
				break
			}
		}
		return status(writeAll(ctx, p, 1, []byte(strconv.Itoa(total)+"\n")))
	},
}

// Pattern returns n bytes of the repeating sequence 0, 1, ..., 255.
func Pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func status(err error) int {
	if err != nil {
		return 1
	}
	return 0
}

func writeAll(ctx context.Context, p *kernel.Process, fd int, b []byte) error {
	for len(b) > 0 {
		n, err := p.Write(ctx, fd, b)
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// Runtime is a vmhost.Runtime that installs the test programs, on top
// of another Runtime's programs.
type Runtime struct {
	base  vmhost.Runtime
	once  sync.Once
	layer vfs.FileSystem
	err   error
}

// New returns a Runtime adding the test programs to base (which may be
// nil).
func New(base vmhost.Runtime) *Runtime { return &Runtime{base: base} }

// Configure adds the layer holding /usr/bin/NAME for every program,
// beneath base's layers.
func (r *Runtime) Configure(ctx context.Context, cfg *vm.Config) error {
	if r.base != nil {
		if err := r.base.Configure(ctx, cfg); err != nil {
			return err
		}
	}
	r.once.Do(func() { r.layer, r.err = buildLayer(context.WithoutCancel(ctx)) })
	if r.err != nil {
		return r.err
	}
	cfg.Lowers = append(cfg.Lowers, r.layer)
	return nil
}

// Attach registers the loader of the test programs.
// It goes first, so that no loader of base (a shebang handler, say)
// claims the test programs' files.
func (r *Runtime) Attach(ctx context.Context, m *vm.VM) error {
	m.Kernel.RegisterLoader(loader{})
	if r.base != nil {
		return r.base.Attach(ctx, m)
	}
	return nil
}

func buildLayer(ctx context.Context) (vfs.FileSystem, error) {
	entries := layerfs.Dirs("/usr", "/usr/bin")
	for name := range programs {
		entries = append(entries, layerfs.Entry{Path: "/usr/bin/" + name, Mode: 0o755, Data: []byte(magic + name + "\n")})
	}
	return layerfs.Build(ctx, entries)
}

type loader struct{}

func (loader) Load(_ context.Context, _ *kernel.Process, exe kernel.Executable) (kernel.Program, error) {
	rest, ok := bytes.CutPrefix(exe.Header, []byte(magic))
	if !ok {
		return nil, kernel.ErrNotMine
	}
	name, _, _ := bytes.Cut(rest, []byte("\n"))
	fn, ok := programs[string(name)]
	if !ok {
		return nil, kernel.ErrNotMine
	}
	return program(fn), nil
}

type program func(ctx context.Context, p *kernel.Process, args []string) int

func (f program) Run(ctx context.Context, p *kernel.Process) int {
	return f(ctx, p, p.Argv()[1:])
}
