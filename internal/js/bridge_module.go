package js

import (
	"crypto/sha256"
	"errors"
	"fmt"
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

const wrapperHead = "(function (exports, require, module, __filename, __dirname, " + modules.ImportMetaName + ") { "
const wrapperTail = "\n})"

type pendingCache struct {
	key    string
	script *v8.UnboundScript
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
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := r.p.Read(r.ctx, fd, buf)
		out = append(out, buf[:n]...)
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
func (r *rt) compile(code, filename string) (*v8.Value, error) {
	if strings.HasPrefix(code, "#!") {
		code = "//" + code[2:]
	}
	wrapped := wrapperHead + code + wrapperTail
	sum := sha256.Sum256([]byte(wrapped))
	key := string(sum[:])
	opts := v8.CompileOptions{}
	cached, hit := r.e.codes.get(key)
	if hit && len(cached) > 0 {
		opts.CachedData = &v8.CompilerCachedData{Bytes: cached}
	}
	us, err := r.iso.CompileUnboundScript(wrapped, filename, opts)
	if err != nil {
		return nil, r.compileError(err, filename, code)
	}
	fn, err := us.Run(r.v8c)
	if err != nil {
		return nil, r.compileError(err, filename, code)
	}
	if (!hit || opts.CachedData.Rejected) && len(r.pendingCaches) < maxPendingCaches {
		r.pendingCaches = append(r.pendingCaches, &pendingCache{key: key, script: us})
	}
	return fn, nil
}

// compileError turns a V8 compile error into a SyntaxError for the guest
// with the offending line.
func (r *rt) compileError(err error, filename, code string) error {
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
			col -= len(wrapperHead)
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
		}
	}
	r.pendingCaches = nil
}

// transform returns the CommonJS form of ES module or TypeScript source,
// cached across processes by source digest.
func (r *rt) transform(src, filename string, f modules.Format) (string, error) {
	sum := sha256.Sum256([]byte(string(f) + "\x00" + filename + "\x00" + src))
	key := "t" + string(sum[:])
	if b, ok := r.e.codes.get(key); ok {
		return string(b), nil
	}
	out, err := modules.Transform(src, filename, f)
	if err != nil {
		var te *modules.TransformError
		if errors.As(err, &te) {
			return "", syntaxError(filename, te.Line, te.Column, te.Text, te.Source)
		}
		return "", err
	}
	r.e.codes.put(key, []byte(out))
	return out, nil
}

func init() {
	register("resolve", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		req, err1 := argString(args, 0)
		dir, err2 := argPath(args, 1)
		kind, err3 := argString(args, 2)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, errno.EINVAL
		}
		k := modules.Require
		switch kind {
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
	})
	register("compileModule", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		file, err := argPath(args, 0)
		if err != nil {
			return nil, err
		}
		b, err := r.readFile(file, maxSourceBytes)
		if err != nil {
			return nil, err
		}
		src := string(b)
		f := r.resolver().FormatOf(file)
		esm := false
		code := src
		switch f {
		case modules.Addon:
			return nil, guestError("ERR_DLOPEN_DISABLED: Cannot load native addon because loading addons is disabled.")
		case modules.ESM, modules.TSModule:
			esm = true
			fallthrough
		case modules.TSCommonJS:
			if code, err = r.transform(src, file, f); err != nil {
				return nil, err
			}
		}
		fn, err := r.compile(code, file)
		if err != nil && f == modules.CommonJS && isESMSyntaxError(err) {
			// Node 22 "detect-module": a .js file outside any "type"
			// that only parses as an ES module is one.
			if code, err = r.transform(src, file, modules.ESM); err != nil {
				return nil, err
			}
			esm = true
			fn, err = r.compile(code, file)
		}
		if err != nil {
			return nil, err
		}
		if esm {
			obj, err := fn.AsObject()
			if err == nil {
				_ = obj.Set("esm", true)
			}
		}
		return fn, nil
	})
	register("compileFunction", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		src, err1 := argString(args, 0)
		file, err2 := argString(args, 1)
		if err1 != nil || err2 != nil {
			return nil, errno.EINVAL
		}
		return r.compile(src, file)
	})
	register("transform", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		src, err1 := argString(args, 0)
		file, err2 := argString(args, 1)
		kind, err3 := argString(args, 2)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, errno.EINVAL
		}
		f := modules.ESM
		switch kind {
		case "ts-esm":
			f = modules.TSModule
		case "ts-cjs":
			f = modules.TSCommonJS
		}
		out, err := r.transform(src, file, f)
		if err != nil {
			return nil, err
		}
		return r.string(out)
	})
}

func isESMSyntaxError(err error) bool {
	var g guestError
	return errors.As(err, &g) && strings.HasPrefix(string(g), "SyntaxError\x00") && modules.LooksLikeESMError(string(g))
}
