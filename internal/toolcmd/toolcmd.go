// Package toolcmd is the guest command /usr/bin/tool, which calls the
// embedder's host tools from a shell:
//
//	tool NAME [JSON-ARGS]   call NAME; without JSON-ARGS they are read from stdin
//	tool --list             print the tools this VM may call, one a line
//
// It prints the JSON result and a newline and exits 0; a failed call
// prints "tool: CODE: message" on stderr and exits 1 (2 for a usage
// error). The command is a kernel loader in Go that does a bounded amount
// of work per call (read the arguments up to Limits.ToolBytes, one
// kernel.Process.CallTool, write the result): no guest script runs on the
// host.
package toolcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/secexec/secexec/internal/layerfs"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// Magic starts the header of the tool executable.
const Magic = "#!secexec-tool\n"

// Path is where the layer puts the command.
const Path = "/usr/bin/tool"

// layer is built once per host process: it is read-only and the same
// for every VM.
var layer = sync.OnceValues(func() (vfs.FileSystem, error) {
	return layerfs.Build(context.Background(), append(layerfs.Dirs("/usr", "/usr/bin"),
		layerfs.Entry{Path: Path, Mode: 0o755, Data: []byte(Magic + "# tool is built into secexec: this file only marks the command.\n")}))
})

// Layer returns the read-only filesystem holding /usr/bin/tool.
func Layer() (vfs.FileSystem, error) { return layer() }

// Loader runs the tool command.
type Loader struct{}

// Load claims executables whose header is Magic.
func (Loader) Load(_ context.Context, _ *kernel.Process, exe kernel.Executable) (kernel.Program, error) {
	if len(exe.Header) < len(Magic) || string(exe.Header[:len(Magic)]) != Magic {
		return nil, kernel.ErrNotMine
	}
	return program{}, nil
}

type program struct{}

const usage = "usage: tool NAME [JSON-ARGS] | tool --list\n"

// Run is the command.
func (program) Run(ctx context.Context, p *kernel.Process) int {
	argv := p.Argv()
	if len(argv) < 2 || len(argv) > 3 || argv[1] == "" {
		write(ctx, p, 2, usage)
		return 2
	}
	switch argv[1] {
	case "-h", "--help":
		write(ctx, p, 1, usage)
		return 0
	case "-l", "--list":
		names := p.Kernel().ToolNames()
		if len(names) > 0 {
			write(ctx, p, 1, strings.Join(names, "\n")+"\n")
		}
		return 0
	}
	name := argv[1]
	var args []byte
	if len(argv) == 3 {
		args = []byte(argv[2])
	} else {
		var err error
		if args, err = readStdin(ctx, p, p.Kernel().Limits().ToolBytes); err != nil {
			return fail(ctx, p, err)
		}
	}
	out, err := p.CallTool(ctx, name, args)
	if err != nil {
		return fail(ctx, p, err)
	}
	write(ctx, p, 1, string(out)+"\n")
	return 0
}

// readStdin reads the arguments, up to one byte past limit (which the
// kernel then refuses as too large), so a guest cannot make the host
// buffer more than that.
func readStdin(ctx context.Context, p *kernel.Process, limit int) ([]byte, error) {
	buf := make([]byte, 0, 4096)
	chunk := make([]byte, 32<<10)
	for len(buf) <= limit {
		n, err := p.Read(ctx, 0, chunk[:min(len(chunk), limit+1-len(buf))])
		buf = append(buf, chunk[:n]...)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
	}
	return buf, nil
}

func fail(ctx context.Context, p *kernel.Process, err error) int {
	var te *kernel.ToolError
	if errors.As(err, &te) {
		write(ctx, p, 2, fmt.Sprintf("tool: %s: %s\n", te.Code, oneLine(te.Message)))
	} else {
		write(ctx, p, 2, "tool: "+oneLine(err.Error())+"\n")
	}
	return 1
}

// oneLine keeps an error on one line of at most 4 KiB.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
	if len(s) > 4096 {
		s = s[:4096] + "..."
	}
	return s
}

func write(ctx context.Context, p *kernel.Process, fd int, s string) {
	b := []byte(s)
	for len(b) > 0 {
		n, err := p.Write(ctx, fd, b)
		if err != nil || n == 0 {
			return
		}
		b = b[n:]
	}
}
