package js

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/internal/js/modules"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// maxSourceBytes bounds one module's source.
const maxSourceBytes = 64 << 20

// maxPendingCaches bounds the scripts a process compiles whose code cache
// is made at exit.
const maxPendingCaches = 512

// Module wrappers. CommonJS is Node's (plus import.meta for code that
// was transformed, and the loader's import() for code that uses it). An
// ES module is a generator that yields between linking and evaluating its
// body, or, with top-level await, an async function (see
// modules.Transform); both are strict, and also receive the module's own
// require and the function that evaluates its imports. An ES module has
// no __filename or __dirname (Node: ReferenceError), and declaring its
// own is the usual idiom (`const __dirname = path.dirname(
// fileURLToPath(import.meta.url))`), so those parameters are renamed.
const (
	wrapperHead   = "(function (exports, require, module, __filename, __dirname, " + modules.ImportMetaName + ") { "
	importHead    = "(function (exports, require, module, __filename, __dirname, " + modules.ImportMetaName + ", " + modules.ImportName + ") { "
	esmParams     = "exports, require, module, __secexec_filename, __secexec_dirname, " + modules.ImportMetaName + ", " + modules.UserRequireName + ", " + modules.DepsName
	esmSyncHead   = "(function* (" + esmParams + ") {\"use strict\"; "
	esmAsyncHead  = "(async function (" + esmParams + ") {\"use strict\"; "
	wrapperTail   = "\n})"
	maxMapPosLine = 1 << 30
)

type pendingCache struct {
	key    string
	script *v8.UnboundScript
	// disk: the source is large enough for the on-disk cache.
	disk bool
}

// procFS is the filesystem as the process sees it, for module
// resolution: every access is the process's, permission-checked.
type procFS struct{ r *rt }

func (f procFS) Kind(path string) modules.Kind {
	st, err := f.r.p.Stat(f.r.ctx, kernel.AtFDCWD, path, true)
	if err != nil {
		return modules.Missing
	}
	switch st.Type() {
	case vfs.TypeDir:
		return modules.Dir
	case vfs.TypeRegular:
		return modules.File
	}
	return modules.File
}

func (f procFS) ReadFile(path string) ([]byte, error) {
	return f.r.readFile(path, modules.MaxPackageJSON)
}

func (f procFS) Realpath(path string) (string, error) { return f.r.realpath(path) }

// readFile reads a whole file through the process, up to max bytes
// (EFBIG beyond).
func (r *rt) readFile(path string, max int) ([]byte, error) {
	fd, err := r.p.Open(r.ctx, kernel.AtFDCWD, path, vfs.O_RDONLY|vfs.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer r.p.Close(fd)
	// Read straight into the result, growing it as needed: most modules
	// are small, and a fixed 64 KiB buffer per file showed in profiles.
	out := make([]byte, 0, 8<<10)
	for {
		if len(out) == cap(out) {
			out = append(out, 0)[:len(out)]
		}
		n, err := r.p.Read(r.ctx, fd, out[len(out):cap(out)])
		out = out[:len(out)+n]
		if len(out) > max {
			return nil, errno.EFBIG
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return out, nil
		}
	}
}

func (r *rt) resolver() *modules.Resolver {
	if r.res == nil {
		r.res = modules.NewResolver(procFS{r})
	}
	return r.res
}

func resolveError(err error) error {
	var nf *modules.NotFoundError
	if errors.As(err, &nf) {
		return guestError("MODULE_NOT_FOUND")
	}
	var ce *modules.CodedError
	if errors.As(err, &ce) {
		return guestError(ce.Code + ": " + ce.Msg)
	}
	return err
}

func syntaxError(file string, line, col int, msg, src string) error {
	return guestError(fmt.Sprintf("SyntaxError\x00%s:%d:%d\x00%s\x00%s", file, line, col, msg, src))
}

// compile compiles CommonJS source in the module wrapper and returns the
// wrapper function, using and feeding the engine's code cache.
func (r *rt) compile(code, filename, head string) (*v8.Value, error) {
	if strings.HasPrefix(code, "#!") {
		code = "//" + code[2:]
	}
	wrapped := head + code + wrapperTail
	sum := sha256.Sum256([]byte(wrapped))
	key := string(sum[:])
	opts := v8.CompileOptions{}
	disk := len(wrapped) >= diskMinSource
	cached, hit := r.e.codes.get(key)
	fromDisk := false
	if !hit && disk {
		if cached, hit = r.e.disk.get(diskCode, key); hit {
			fromDisk = true
			r.e.codes.put(key, cached)
		}
	}
	if hit && len(cached) > 0 {
		opts.CachedData = &v8.CompilerCachedData{Bytes: cached}
	}
	us, err := r.iso.CompileUnboundScript(wrapped, filename, opts)
	if err != nil {
		return nil, r.compileError(err, filename, code, len(head))
	}
	fn, err := us.Run(r.v8c)
	if err != nil {
		return nil, r.compileError(err, filename, code, len(head))
	}
	if fromDisk && opts.CachedData.Rejected {
		r.e.disk.rejected.Add(1)
	}
	if (!hit || opts.CachedData.Rejected) && len(r.pendingCaches) < maxPendingCaches {
		r.pendingCaches = append(r.pendingCaches, &pendingCache{key: key, script: us, disk: disk})
	}
	return fn, nil
}

// compileError turns a V8 compile error into a SyntaxError for the guest
// with the offending line.
func (r *rt) compileError(err error, filename, code string, head int) error {
	if r.terminated.Load() != termNone {
		return err
	}
	var je *v8.JSError
	if !errors.As(err, &je) {
		return err
	}
	msg := strings.TrimPrefix(je.Message, "SyntaxError: ")
	line, col := 0, 0
	if i := strings.LastIndex(je.Location, ":"); i > 0 {
		rest := je.Location[:i]
		fmt.Sscanf(je.Location[i+1:], "%d", &col)
		if j := strings.LastIndex(rest, ":"); j > 0 {
			fmt.Sscanf(rest[j+1:], "%d", &line)
		}
	}
	src := ""
	if lines := strings.SplitN(code, "\n", line+1); line >= 1 && line <= len(lines) {
		src = lines[line-1]
		if line == 1 {
			col -= head
		}
	}
	if len(src) > 200 {
		src = ""
	}
	return syntaxError(filename, line, max(col, 0), msg, src)
}

func (r *rt) flushCodeCaches() {
	for _, pc := range r.pendingCaches {
		cd := pc.script.CreateCodeCache()
		if cd != nil && !cd.Rejected && len(cd.Bytes) > 0 {
			r.e.codes.put(pc.key, cd.Bytes)
			if pc.disk {
				r.e.disk.put(diskCode, pc.key, cd.Bytes)
			}
		}
	}
	r.pendingCaches = nil
}

// transform returns the transformed form of ES module or TypeScript
// source, cached across processes by source digest.
func (r *rt) transform(src, filename string, f modules.Format) (*modules.Module, error) {
	sum := sha256.Sum256([]byte(string(f) + "\x00" + filename + "\x00" + src))
	key := "t" + string(sum[:])
	disk := len(src) >= diskMinSource
	b, ok := r.e.codes.get(key)
	if !ok && disk {
		if b, ok = r.e.disk.get(diskTransform, key); ok {
			r.e.codes.put(key, b)
		}
	}
	if ok {
		var m modules.Module
		if m.UnmarshalBinary(b) == nil {
			return &m, nil
		}
	}
	m, err := modules.Transform(src, filename, f)
	if err != nil {
		var te *modules.TransformError
		if errors.As(err, &te) {
			name := filename
			if f == modules.ESM || f == modules.TSModule {
				name = modules.FileURL(filename) // as Node names ES modules
			}
			return nil, syntaxError(name, te.Line, te.Column, te.Text, te.Source)
		}
		return nil, err
	}
	if b, err := m.MarshalBinary(); err == nil {
		r.e.codes.put(key, b)
		if disk {
			r.e.disk.put(diskTransform, key, b)
		}
	}
	return m, nil
}

// compileTransformed compiles transformed code in its wrapper and
// returns the wrapper function, described for the module loader by its
// properties: esm, tla (top-level await), script (the name stack traces
// show: the file: URL of an ES module, as Node shows it) and source (the
// original text, for the source line shown above an uncaught error).
// Positions in the script map back to the source through the process's
// script table.
func (r *rt) compileTransformed(m *modules.Module, file, src string) (*v8.Value, error) {
	name, head := file, wrapperHead
	if m.Import {
		head = importHead
	}
	if m.ESM {
		name, head = modules.FileURL(file), esmSyncHead
		if m.Async {
			head = esmAsyncHead
		}
	}
	fn, err := r.compile(m.Code, name, head)
	if err != nil {
		return nil, err
	}
	mapped := r.resolver().Scripts().Add(name, m, len(head))
	obj, err := fn.AsObject()
	if err != nil {
		return fn, nil
	}
	_ = obj.Set("esm", m.ESM)
	_ = obj.Set("tla", m.Async)
	_ = obj.Set("script", name)
	_ = obj.Set("mapped", mapped)
	_ = obj.Set("dynamicImport", m.Import)
	if m.Async {
		_ = obj.Set("tlaLine", int32(min(m.TLALine, 1<<30)))
		_ = obj.Set("tlaCol", int32(min(m.TLACol, 1<<30)))
	}
	if len(src) <= maxShownSource {
		_ = obj.Set("source", src)
	}
	return fn, nil
}

// maxShownSource bounds the sources handed back for error reports.
const maxShownSource = 4 << 20

// bridgeResolve resolves a module request from dir, as require, import
// or the main module resolve it: → the file.
func bridgeResolve(r *rt, a *callArgs) (*v8.Value, error) {
	req, dir := a.str(0), a.path(1)
	k := modules.Require
	switch a.str(2) {
	case "import":
		k = modules.Import
	case "main":
		dir = "/"
	}
	f, err := r.resolver().Resolve(req, dir, k)
	if err != nil {
		return nil, resolveError(err)
	}
	return r.string(f)
}

// bridgeCompileModule compiles a module file for the loader: CommonJS in
// Node's wrapper, ES modules and TypeScript through the transform (see
// compileTransformed for what the returned function carries).
func bridgeCompileModule(r *rt, a *callArgs) (*v8.Value, error) {
	file := a.path(0)
	b, err := r.readFile(file, maxSourceBytes)
	if err != nil {
		return nil, err
	}
	src := string(b)
	f := r.resolver().FormatOf(file)
	switch f {
	case modules.Addon:
		// The runtime words the error (bootjs errors.js).
		return nil, guestError("ERR_DLOPEN_DISABLED: " + file)
	case modules.ESM, modules.TSModule, modules.TSCommonJS:
		m, err := r.transform(src, file, f)
		if err != nil {
			return nil, err
		}
		return r.compileTransformed(m, file, src)
	}
	fn, err := r.compile(src, file, wrapperHead)
	if err != nil && f == modules.CommonJS && isESMSyntaxError(err) {
		// Node 22 "detect-module": a .js file outside any "type" that
		// only parses as an ES module is one.
		m, terr := r.transform(src, file, modules.ESM)
		if terr != nil {
			return nil, terr
		}
		return r.compileTransformed(m, file, src)
	}
	if err == nil && hasDynamicImport(src) {
		// V8 as v8go runs it cannot import(): CommonJS that does is
		// transformed so that import() goes to the module loader.
		if m, terr := r.transform(src, file, modules.CommonJS); terr == nil && m.Import {
			return r.compileTransformed(m, file, src)
		}
	}
	return fn, err
}

// bridgeCompileLazy compiles one of the bootstrap's lazy chunks (see
// bootjs.Bundle.Lazy) in the module wrapper.
func bridgeCompileLazy(r *rt, a *callArgs) (*v8.Value, error) {
	name := a.str(0)
	src, ok := r.e.bundle.Lazy[name]
	if !ok {
		return nil, errno.ENOENT
	}
	return r.compile(src, "node:internal/deps/"+name+".js", wrapperHead)
}

// bridgeCompileFunction compiles CommonJS source (Module._compile's) in
// the module wrapper, under the name file.
func bridgeCompileFunction(r *rt, a *callArgs) (*v8.Value, error) {
	return r.compile(a.str(0), a.str(1), wrapperHead)
}

// bridgeCompileESM compiles ES module (or, with ts, TypeScript module)
// source that has no file: --input-type=module code.
func bridgeCompileESM(r *rt, a *callArgs) (*v8.Value, error) {
	src, file := a.str(0), a.path(1)
	if len(src) > maxSourceBytes {
		return nil, errno.EINVAL
	}
	f := modules.ESM
	if a.bool(2) {
		f = modules.TSModule
	}
	m, err := r.transform(src, file, f)
	if err != nil {
		return nil, err
	}
	return r.compileTransformed(m, file, src)
}

// bridgeTransform transforms ES module source (kind "ts-esm": TypeScript
// module, "ts-cjs": TypeScript CommonJS) and returns the code.
func bridgeTransform(r *rt, a *callArgs) (*v8.Value, error) {
	f := modules.ESM
	switch a.str(2) {
	case "ts-esm":
		f = modules.TSModule
	case "ts-cjs":
		f = modules.TSCommonJS
	}
	m, err := r.transform(a.str(0), a.str(1), f)
	if err != nil {
		return nil, err
	}
	return r.string(m.Code)
}

// bridgeTransformScript transforms -e/-p/stdin code that needs it
// (TypeScript, or import() in CommonJS) and registers its source map
// under the script's name: → JSON {code, mapped, import}.
func bridgeTransformScript(r *rt, a *callArgs) (*v8.Value, error) {
	name := a.str(1)
	f := modules.CommonJS
	if a.str(2) == "ts-cjs" {
		f = modules.TSCommonJS
	}
	m, err := r.transform(a.str(0), name, f)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(struct {
		Code   string `json:"code"`
		Mapped bool   `json:"mapped"`
		Import bool   `json:"import"`
	}{m.Code, r.resolver().Scripts().Add(name, m, 0), m.Import})
	if err != nil {
		return nil, err
	}
	return r.string(string(out))
}

// bridgeMapPosition maps a position V8 reported in a transformed script
// back to its source: "line:column", or undefined (also for a position
// out of range).
func bridgeMapPosition(r *rt, a *callArgs) (*v8.Value, error) {
	name, line, col := a.str(0), a.int(1), a.int(2)
	if line < 1 || col < 1 || line > maxMapPosLine || col > maxMapPosLine {
		return nil, nil
	}
	l, c, ok := r.resolver().Scripts().Map(name, line, col)
	if !ok {
		return nil, nil
	}
	return r.string(strconv.Itoa(l) + ":" + strconv.Itoa(c))
}

var dynamicImportRE = regexp.MustCompile(`\bimport\s*\(`)

// hasDynamicImport is a quick check for import( in source.
func hasDynamicImport(src string) bool {
	return strings.Contains(src, "import") && dynamicImportRE.MatchString(src)
}

func isESMSyntaxError(err error) bool {
	var g guestError
	return errors.As(err, &g) && strings.HasPrefix(string(g), "SyntaxError\x00") && modules.LooksLikeESMError(string(g))
}

// bridgeLazyAsset returns the bytes of one of the bundle's binary assets
// (bootjs.Bundle.Assets: llhttp's WebAssembly), which the bundle holds
// decoded, so no process decodes them from base64 itself.
func bridgeLazyAsset(r *rt, a *callArgs) (*v8.Value, error) {
	data, ok := r.e.bundle.Assets[a.str(0)]
	if !ok {
		return nil, errno.ENOENT
	}
	return r.bytesResult(data)
}
