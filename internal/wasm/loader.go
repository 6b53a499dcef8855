package wasm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"time"

	"github.com/secexec/secexec/internal/softfs"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

var wasmMagic = []byte("\x00asm")

// maxScriptDepth bounds "#!" interpreter nesting (ELOOP beyond), as
// Linux's binfmt_script does.
const maxScriptDepth = 4

// loader is the kernel.Loader of an Engine.
type loader struct{ e *Engine }

type depthKey struct{}

// Load returns a Program for a WebAssembly module, or for a "#!" script
// whose interpreter is one. Other files are not its business.
func (l loader) Load(ctx context.Context, p *kernel.Process, exe kernel.Executable) (kernel.Program, error) {
	if l.e.isClosed() {
		return nil, fmt.Errorf("%w: %w", ErrClosed, errno.EIO)
	}
	switch {
	case bytes.HasPrefix(exe.Header, wasmMagic):
		t0 := time.Now()
		ent, hit, env, err := l.e.compiledFor(ctx, p, exe)
		if err != nil {
			return nil, err
		}
		pr := &program{e: l.e, mod: ent, env: env, lookup: time.Since(t0), cache: "miss"}
		if hit {
			pr.cache = "hit"
		}
		if ent.compileSeen.CompareAndSwap(false, true) {
			pr.compile = ent.compileT
			pr.lookup -= min(pr.compile, pr.lookup)
		}
		return pr, nil
	case bytes.HasPrefix(exe.Header, []byte("#!")):
		return l.loadScript(ctx, p, exe)
	}
	return nil, kernel.ErrNotMine
}

// loadScript runs the interpreter named on a script's first line with
// argv [interpreter, (argument), script, argv[1:]...].
func (l loader) loadScript(ctx context.Context, p *kernel.Process, exe kernel.Executable) (kernel.Program, error) {
	depth, _ := ctx.Value(depthKey{}).(int)
	if depth >= maxScriptDepth {
		return nil, errno.Path("exec", exe.Path, errno.ELOOP)
	}
	interp, arg, ok := parseShebang(exe.Header)
	if !ok {
		return nil, errno.Path("exec", exe.Path, errno.ENOEXEC)
	}
	ix, err := p.ResolveExecutable(ctx, interp, nil)
	if err != nil {
		return nil, err
	}
	prog, err := p.LoadProgram(context.WithValue(ctx, depthKey{}, depth+1), ix)
	if err != nil {
		return nil, err
	}
	wp, ok := prog.(*program)
	if !ok {
		// Another runtime's interpreter: it cannot be handed the rewritten
		// argv through this loader, so let the kernel ask the next one.
		return nil, kernel.ErrNotMine
	}
	head := []string{interp}
	if arg != "" {
		head = append(head, arg)
	}
	head = append(head, exe.Path)
	return &program{e: l.e, mod: wp.mod, env: wp.env, prefix: wp.argv(head), cache: wp.cache}, nil
}

// parseShebang splits a "#!" line into the interpreter and its optional
// single argument, as Linux does: the line must end within the header,
// blanks around both are trimmed, and everything after the interpreter
// is one argument.
func parseShebang(header []byte) (interp, arg string, ok bool) {
	if !bytes.HasPrefix(header, []byte("#!")) {
		return "", "", false
	}
	line, _, found := strings.Cut(string(header[2:]), "\n")
	if !found {
		return "", "", false
	}
	line = strings.Trim(line, " \t\r")
	interp = line
	if i := strings.IndexAny(line, " \t"); i >= 0 {
		interp, arg = line[:i], strings.Trim(line[i+1:], " \t")
	}
	if interp == "" || strings.IndexByte(line, 0) >= 0 {
		return "", "", false
	}
	return interp, arg, true
}

// compiledFor finds or compiles the module of exe, with a reference,
// and reports whether the module cache had it, and the environment
// defaults of the software command exe is, if it is one.
func (e *Engine) compiledFor(ctx context.Context, p *kernel.Process, exe kernel.Executable) (*compiled, bool, []string, error) {
	if exe.Stat.Size > MaxModuleSize {
		return nil, false, nil, errno.Path("exec", exe.Path, errno.EFBIG)
	}
	// A command of the software store: known by its attributes, so
	// nothing is read.
	e.layersMu.RLock()
	layers := e.layers
	e.layersMu.RUnlock()
	for _, fs := range layers {
		if c, want, ok := fs.CommandAt(exe.Path); ok && softfs.SameFile(exe.Stat, want) {
			cm, hit, err := e.mods.lookup(ctx, c.Fingerprint, c.Module)
			if err == nil {
				cm.trusted.Store(true)
			}
			return cm, hit, c.Env, err
		}
	}
	cm, hit, err := e.compiledFile(ctx, p, exe)
	return cm, hit, nil, err
}

// compiledFile finds or compiles the module in the file exe.
func (e *Engine) compiledFile(ctx context.Context, p *kernel.Process, exe kernel.Executable) (*compiled, bool, error) {
	// Any other file: its inode may know its fingerprint; otherwise the
	// fingerprint of this version of the file may be remembered; otherwise
	// it is read and hashed.
	v := p.Kernel().VFS()
	f, err := v.Open(ctx, p.Caller(), exe.Path, vfs.O_RDONLY, 0)
	if err != nil {
		return nil, false, err
	}
	defer f.DecRef()
	st, err := f.Stat(ctx)
	if err != nil {
		return nil, false, err
	}
	if st.Size > MaxModuleSize {
		return nil, false, errno.Path("exec", exe.Path, errno.EFBIG)
	}
	read := func() ([]byte, error) { return readAll(ctx, f, st.Size) }
	if in, ok := f.(interface{ Inode() vfs.Inode }); ok {
		if id, ok := in.Inode().(softfs.ContentIDer); ok {
			return e.mods.lookup(ctx, id.ContentID(), read)
		}
	}
	key := keyOf(v, &st)
	if fp, ok := e.hashes.get(key); ok {
		return e.mods.lookup(ctx, fp, read)
	}
	b, err := read()
	if err != nil {
		return nil, false, err
	}
	fp := sha256.Sum256(b)
	e.hashes.put(key, fp)
	return e.mods.lookup(ctx, fp, func() ([]byte, error) { return b, nil })
}

// readAll reads a whole module file of the given size.
func readAll(ctx context.Context, f vfs.File, size int64) ([]byte, error) {
	b := make([]byte, size)
	n := 0
	for n < len(b) {
		k, err := f.Pread(ctx, b[n:], int64(n))
		if err != nil {
			return nil, err
		}
		if k == 0 {
			break
		}
		n += k
	}
	if n != len(b) {
		// The file shrank since it was stat'ed.
		return nil, errno.EAGAIN
	}
	return b, nil
}
