package pysupport

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/secexec/secexec/internal/limitbuf"
	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/wasm"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/software"
)

// CPython for WASI is built without optimisation, so every start that
// compiles a .py file, or reads a module out of the standard library's
// deflated zip (python312.zip, embedded in the module: zipimport parses its
// 460-entry directory in Python on each start), costs tens of
// milliseconds. Set-up therefore runs the VM's own python3 once and keeps
// what it produces as bytecode the layer serves read-only:
//
//   - the standard library's .pyc files, out of the zip, uncompressed under
//     StdlibDir, which python3's PYTHONPATH names before the zip;
//   - the support files compiled to __pycache__ next to them, as
//     checked-hash pycs: CPython hashes the source (in C, microseconds)
//     instead of comparing times, which the layer does not have (every
//     file's is the epoch), so a source a guest changes in its own VM is
//     compiled again there, never served stale. The sources are the
//     support files, a few hundred KB; the standard library has none.
//
// The bytecode lives in the host's cache (Dir/bytecode-FINGERPRINT), written
// once by set-up and only read after; each VM sees it through its own
// read-only lower layer, beneath the VM's private overlay, so a guest that
// writes a pyc there changes its own VM only.

// StdlibDir is the guest directory of the standard library's bytecode.
const StdlibDir = software.PythonStdlibDir

// Bounds on a bytecode set: a cache file or a build that exceeds them is
// refused (the standard library's bytecode is about 6 MB in 460 files).
const (
	maxBytecodeBytes = 64 << 20
	maxBytecodeFiles = 8192
)

// bytecodeFormat versions the cache file's framing and the build script.
const bytecodeFormat = "secexec-python-bytecode-1"

// ErrBytecode is matched by errors of a bytecode build or a cache file
// that is not a valid bytecode set.
var ErrBytecode = errors.New("pysupport: python bytecode")

// Bytecode is a set of .pyc files by guest path, for LayerWith.
type Bytecode struct {
	files map[string][]byte
	// mapped is the cache file's mapping the files are slices of (nil for
	// a set just built).
	mapped []byte
	// Fingerprint is the key the set was built and stored under.
	Fingerprint string
}

// Len returns the number of files in the set.
func (b *Bytecode) Len() int { return len(b.files) }

// bytecodeScript runs in the VM's python3: it writes each standard library
// .pyc of the zip on sys.path, then each support source compiled, framed
// as "PATH\0SIZE\0BYTES" on stdout.
const bytecodeScript = `import sys, zipfile, py_compile, importlib.util
out = sys.stdout.buffer
def emit(p, data):
    out.write(b"%s\0%d\0" % (p.encode(), len(data)))
    out.write(data)
stdlib, sources = sys.argv[1], sys.argv[2:]
zips = [e for e in sys.path if e.endswith(".zip")]
if not zips:
    sys.exit("no standard library zip on sys.path")
with zipfile.ZipFile(zips[0]) as z:
    for name in z.namelist():
        if name.endswith(".pyc"):
            emit(stdlib + "/" + name, z.read(name))
for src in sources:
    tmp = "/tmp/secexec-bytecode.pyc"
    py_compile.compile(src, cfile=tmp, dfile=src, doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
    with open(tmp, "rb") as f:
        emit(importlib.util.cache_from_source(src), f.read())
out.flush()
`

// sources returns the support layer's Python sources, sorted.
func sources() []string {
	var out []string
	for p := range Files() {
		if strings.HasSuffix(p, ".py") {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// BytecodeFingerprint is the cache key of the bytecode for a python3
// module: it covers the module's bytes (through their fingerprint), the
// support sources, the build script and secexec's version, so that a
// change to any of them builds anew.
func BytecodeFingerprint(module software.Fingerprint) string {
	h := sha256.New()
	version := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n%d\n%s", bytecodeFormat, version, module, StdlibDir, len(bytecodeScript), bytecodeScript)
	files := Files()
	for _, p := range sources() {
		fmt.Fprintf(h, "%s %d\n", p, len(files[p]))
		h.Write(files[p])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// bytecodePath is the cache file of a fingerprint.
func bytecodePath(dir, fp string) string { return filepath.Join(dir, "bytecode-"+fp) }

// BytecodePath returns the file in the cache directory dir that holds
// (or would hold) the bytecode for module.
func BytecodePath(dir string, module software.Fingerprint) string {
	return bytecodePath(dir, BytecodeFingerprint(module))
}

// LoadBytecode reads the bytecode for module from the cache directory
// dir. A set that was never built yields an error matching
// os.ErrNotExist; a damaged one ErrBytecode.
func LoadBytecode(dir string, module software.Fingerprint) (*Bytecode, error) {
	fp := BytecodeFingerprint(module)
	f, err := os.Open(bytecodePath(dir, fp))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxBytecodeBytes {
		return nil, fmt.Errorf("%w: %s: larger than %d bytes", ErrBytecode, f.Name(), maxBytecodeBytes)
	}
	// The files are slices of the mapping, held for the engine's life.
	b, err := mapFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBytecode, f.Name(), err)
	}
	files, err := parseBytecode(b)
	if err != nil {
		unmapFile(b)
		return nil, fmt.Errorf("%w: %s: %w", ErrBytecode, f.Name(), err)
	}
	return &Bytecode{files: files, Fingerprint: fp, mapped: b}, nil
}

// CheckBytecode reports whether dir holds a valid bytecode set for
// module: nil, an error matching os.ErrNotExist, or ErrBytecode. It keeps
// nothing mapped.
func CheckBytecode(dir string, module software.Fingerprint) error {
	bc, err := LoadBytecode(dir, module)
	if err == nil {
		unmapFile(bc.mapped)
	}
	return err
}

// parseBytecode checks and splits a framed bytecode set: every path is a
// .pyc of StdlibDir or of a __pycache__ directory of the support layer,
// and the set is within the bounds.
func parseBytecode(b []byte) (map[string][]byte, error) {
	if len(b) > maxBytecodeBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxBytecodeBytes)
	}
	files := map[string][]byte{}
	for len(b) > 0 {
		name, rest, ok := bytes.Cut(b, []byte{0})
		if !ok {
			return nil, errors.New("truncated path")
		}
		size, rest, ok := bytes.Cut(rest, []byte{0})
		if !ok {
			return nil, errors.New("truncated size")
		}
		n, err := strconv.Atoi(string(size))
		if err != nil || n < 0 || n > len(rest) {
			return nil, fmt.Errorf("bad size %q for %q", size, name)
		}
		p := string(name)
		if !validBytecodePath(p) {
			return nil, fmt.Errorf("path %q is outside the bytecode directories", p)
		}
		if _, dup := files[p]; dup {
			return nil, fmt.Errorf("path %q twice", p)
		}
		if len(files) == maxBytecodeFiles {
			return nil, fmt.Errorf("more than %d files", maxBytecodeFiles)
		}
		files[p] = rest[:n:n]
		b = rest[n:]
	}
	if len(files) == 0 {
		return nil, errors.New("no files")
	}
	return files, nil
}

// validBytecodePath reports whether p may hold bytecode in the layer: a
// clean .pyc path below StdlibDir, or in a __pycache__ directory below
// the support directory.
func validBytecodePath(p string) bool {
	if path.Clean(p) != p || !strings.HasSuffix(p, ".pyc") || strings.ContainsRune(p, 0) {
		return false
	}
	if strings.HasPrefix(p, StdlibDir+"/") {
		return true
	}
	return strings.HasPrefix(p, software.PythonSupportDir+"/") && path.Base(path.Dir(p)) == "__pycache__"
}

// BytecodeOptions configure EnsureBytecode.
type BytecodeOptions struct {
	// Dir is the cache directory of bytecode sets.
	Dir string
	// Engine runs the build; Store provides python3.
	Engine *wasm.Engine
	Store  *software.Store
	// Timeout bounds the build's run; zero means two minutes.
	Timeout time.Duration
}

// EnsureBytecode returns the bytecode of the store's python3, loading it
// from Dir, or building it with python3 itself in a VM of its own and
// storing it when Dir lacks it or holds a damaged copy. fresh reports a
// build. A store without
// python3 yields an error matching software.ErrNotFound.
func EnsureBytecode(ctx context.Context, opts BytecodeOptions) (bc *Bytecode, fresh bool, err error) {
	py, ok := opts.Store.Command(software.PythonPin.Commands[0])
	if !ok {
		return nil, false, fmt.Errorf("%w: python3", software.ErrNotFound)
	}
	bc, err = LoadBytecode(opts.Dir, py.Fingerprint)
	if err == nil || !errors.Is(err, os.ErrNotExist) && !errors.Is(err, ErrBytecode) {
		return bc, false, err
	}
	// Missing, or damaged: built anew (and replaced).
	files, err := buildBytecode(ctx, opts)
	if err != nil {
		return nil, false, err
	}
	fp := BytecodeFingerprint(py.Fingerprint)
	if err := writeBytecode(opts.Dir, fp, files); err != nil {
		return nil, false, err
	}
	return &Bytecode{files: files, Fingerprint: fp}, true, nil
}

// buildBytecode runs bytecodeScript in a fresh VM over the software and
// plain support layers.
func buildBytecode(ctx context.Context, opts BytecodeOptions) (map[string][]byte, error) {
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	rt := &buildRuntime{eng: opts.Engine, layers: []vfs.FileSystem{opts.Engine.SoftwareLayer(opts.Store), Layer()}}
	h, err := vmhost.New(ctx, vmhost.Config{Runtime: rt, Policy: policy.AllowAll()})
	if err != nil {
		return nil, fmt.Errorf("%w: build VM: %w", ErrBytecode, err)
	}
	defer h.Close(context.WithoutCancel(ctx))
	out, stderr := limitbuf.New(maxBytecodeBytes+1), limitbuf.New(4096)
	argv := append([]string{"/usr/bin/python3", "-I", "-S", "-c", bytecodeScript, StdlibDir}, sources()...)
	exit, err := h.Run(ctx, vmhost.RunSpec{Argv: argv, Stdout: out, Stderr: stderr, Timeout: timeout})
	if err != nil {
		return nil, fmt.Errorf("%w: build: %w", ErrBytecode, err)
	}
	if exit.Code != 0 || exit.Outcome != vmhost.Succeeded {
		return nil, fmt.Errorf("%w: build: python3 %s (exit %d): %s%s", ErrBytecode, exit.Outcome, exit.Code, stderr.Bytes(), exit.Note)
	}
	if out.Full() {
		return nil, fmt.Errorf("%w: build: more than %d bytes", ErrBytecode, maxBytecodeBytes)
	}
	files, err := parseBytecode(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%w: build: %w", ErrBytecode, err)
	}
	return files, nil
}

// writeBytecode stores a set under its fingerprint, by rename, so that a
// reader never sees half of one.
func writeBytecode(dir, fp string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%w: %w", ErrBytecode, err)
	}
	f, err := os.CreateTemp(dir, ".bytecode-*")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBytecode, err)
	}
	defer os.Remove(f.Name())
	var buf bytes.Buffer
	for _, p := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(&buf, "%s\x00%d\x00", p, len(files[p]))
		buf.Write(files[p])
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("%w: %w", ErrBytecode, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("%w: %w", ErrBytecode, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%w: %w", ErrBytecode, err)
	}
	if err := os.Rename(f.Name(), bytecodePath(dir, fp)); err != nil {
		return fmt.Errorf("%w: %w", ErrBytecode, err)
	}
	pruneBytecode(dir)
	return nil
}

// keptBytecode is how many sets a cache directory keeps: each build
// (another python3 module, other support sources, another secexec
// version) adds one of about 9 MB; a few binaries of different versions
// sharing the directory still each find theirs.
const keptBytecode = 4

// pruneBytecode removes all but the keptBytecode newest sets of dir. An
// engine that has a removed set loaded keeps its copy in memory.
func pruneBytecode(dir string) {
	names, err := filepath.Glob(filepath.Join(dir, "bytecode-*"))
	if err != nil || len(names) <= keptBytecode {
		return
	}
	mtime := map[string]time.Time{}
	for _, n := range names {
		if st, err := os.Stat(n); err == nil {
			mtime[n] = st.ModTime()
		}
	}
	slices.SortFunc(names, func(a, b string) int { return mtime[b].Compare(mtime[a]) })
	for _, n := range names[keptBytecode:] {
		_ = os.Remove(n)
	}
}

// buildRuntime is the build VM's runtime: the WebAssembly engine and the
// layers, nothing else.
type buildRuntime struct {
	eng    *wasm.Engine
	layers []vfs.FileSystem
}

func (r *buildRuntime) Configure(_ context.Context, cfg *vm.Config) error {
	cfg.Lowers = append(append([]vfs.FileSystem(nil), r.layers...), cfg.Lowers...)
	return nil
}

func (r *buildRuntime) Attach(_ context.Context, m *vm.VM) error {
	m.Kernel.RegisterLoader(r.eng.Loader())
	return nil
}
