// Package modules implements Node's module resolution and module format
// rules over an abstract filesystem: the CommonJS algorithm (relative
// paths, node_modules lookup, package.json "main"), package "exports"
// and "imports" with conditions and subpath patterns, and the choice
// between CommonJS and ES module for a file. It has no V8 dependency, so
// it is tested and fuzzed on its own.
package modules

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
)

// FS is what resolution needs of a filesystem. Paths are absolute and
// clean.
type FS interface {
	// Kind reports whether path is a file, a directory or missing
	// (following symlinks).
	Kind(path string) Kind
	// ReadFile returns a file's contents (package.json files only; at
	// most MaxPackageJSON bytes are needed).
	ReadFile(path string) ([]byte, error)
	// Realpath resolves symlinks.
	Realpath(path string) (string, error)
}

// Kind is a path's type for resolution.
type Kind int

// Kinds.
const (
	Missing Kind = iota
	File
	Dir
)

// MaxPackageJSON bounds the package.json files read; larger ones are
// treated as invalid.
const MaxPackageJSON = 4 << 20

// Bounds on work for hostile package.json files.
const (
	maxTargetDepth = 32
	maxExportKeys  = 10000
)

// NotFoundError is MODULE_NOT_FOUND.
type NotFoundError struct{ Request string }

func (e *NotFoundError) Error() string { return fmt.Sprintf("Cannot find module '%s'", e.Request) }

// CodedError is one of Node's ERR_* resolution errors.
type CodedError struct {
	Code string
	Msg  string
}

func (e *CodedError) Error() string { return e.Code + ": " + e.Msg }

// Kind of a resolution request.
const (
	Require = "require"
	Import  = "import"
)

// Resolver resolves module requests. It caches package.json files; use
// one Resolver per process (files may change between processes).
type Resolver struct {
	fs      FS
	pkgs    map[string]*Package
	scripts Scripts
}

// NewResolver returns a resolver over fs.
func NewResolver(fs FS) *Resolver {
	return &Resolver{fs: fs, pkgs: map[string]*Package{}}
}

// Package is the part of a package.json resolution uses.
type Package struct {
	Dir     string
	Name    string
	Main    string
	Type    string
	Exports json.RawMessage
	Imports json.RawMessage
	valid   bool
}

// maxPackages bounds the package.json cache.
const maxPackages = 4096

// readPackage returns the package.json in dir, or nil if there is none.
func (r *Resolver) readPackage(dir string) *Package {
	if p, ok := r.pkgs[dir]; ok {
		return p
	}
	var p *Package
	file := path.Join(dir, "package.json")
	if r.fs.Kind(file) == File {
		p = &Package{Dir: dir}
		if b, err := r.fs.ReadFile(file); err == nil && len(b) <= MaxPackageJSON {
			var raw struct {
				Name    string          `json:"name"`
				Main    any             `json:"main"`
				Type    any             `json:"type"`
				Exports json.RawMessage `json:"exports"`
				Imports json.RawMessage `json:"imports"`
			}
			if json.Unmarshal(b, &raw) == nil {
				p.valid = true
				p.Name = raw.Name
				if s, ok := raw.Main.(string); ok {
					p.Main = s
				}
				if s, ok := raw.Type.(string); ok {
					p.Type = s
				}
				if len(raw.Exports) > 0 && string(raw.Exports) != "null" {
					p.Exports = raw.Exports
				}
				if len(raw.Imports) > 0 && string(raw.Imports) != "null" {
					p.Imports = raw.Imports
				}
			}
		}
	}
	if len(r.pkgs) < maxPackages {
		r.pkgs[dir] = p
	}
	return p
}

// PackageScope returns the nearest package.json at or above dir.
func (r *Resolver) PackageScope(dir string) *Package {
	for d := dir; ; d = path.Dir(d) {
		if path.Base(d) == "node_modules" {
			return nil
		}
		if p := r.readPackage(d); p != nil {
			return p
		}
		if d == "/" {
			return nil
		}
	}
}

func conditions(kind string) []string {
	if kind == Import {
		return []string{"node", "import", "module-sync", "default"}
	}
	return []string{"node", "require", "module-sync", "default"}
}

// Resolve resolves request from directory dir, for require() (kind
// Require) or import (kind Import), and returns the real path of the
// file. Builtin modules are the caller's business.
func (r *Resolver) Resolve(request, dir, kind string) (string, error) {
	if request == "" || strings.IndexByte(request, 0) >= 0 {
		return "", &NotFoundError{request}
	}
	if strings.HasPrefix(request, "file://") {
		p, err := FileURLToPath(request)
		if err != nil {
			return "", err
		}
		request = p
	}
	var found string
	switch {
	case strings.HasPrefix(request, "/") || request == "." || request == ".." ||
		strings.HasPrefix(request, "./") || strings.HasPrefix(request, "../"):
		x := request
		if !strings.HasPrefix(x, "/") {
			x = path.Join(dir, x)
		} else {
			x = path.Clean(x)
		}
		found = r.loadAsFile(x)
		if found == "" {
			found = r.loadAsDirectory(x)
		}
		if found == "" && strings.HasSuffix(request, "/") {
			found = r.loadAsDirectory(x)
		}
	case strings.HasPrefix(request, "#"):
		f, err := r.packageImports(request, dir, kind)
		if err != nil {
			return "", err
		}
		found = f
	default:
		f, err := r.loadSelf(request, dir, kind)
		if err != nil {
			return "", err
		}
		if f == "" {
			f, err = r.loadNodeModules(request, dir, kind)
			if err != nil {
				return "", err
			}
		}
		found = f
	}
	if found == "" {
		return "", &NotFoundError{request}
	}
	real, err := r.fs.Realpath(found)
	if err != nil {
		return found, nil
	}
	return real, nil
}

// extensions tried by LOAD_AS_FILE, in Node's order.
var extensions = []string{".js", ".json", ".node"}

func (r *Resolver) loadAsFile(x string) string {
	if r.fs.Kind(x) == File {
		return x
	}
	for _, ext := range extensions {
		if r.fs.Kind(x+ext) == File {
			return x + ext
		}
	}
	return ""
}

func (r *Resolver) loadIndex(x string) string {
	for _, ext := range extensions {
		if f := path.Join(x, "index"+ext); r.fs.Kind(f) == File {
			return f
		}
	}
	return ""
}

func (r *Resolver) loadAsDirectory(x string) string {
	if r.fs.Kind(x) != Dir {
		return ""
	}
	if p := r.readPackage(x); p != nil && p.Main != "" {
		m := path.Join(x, p.Main)
		if f := r.loadAsFile(m); f != "" {
			return f
		}
		if f := r.loadIndex(m); f != "" {
			return f
		}
	}
	return r.loadIndex(x)
}

// splitPackage splits "pkg/sub" or "@scope/pkg/sub" into name and
// subpath ("." or "./sub").
func splitPackage(request string) (name, sub string, ok bool) {
	parts := strings.SplitN(request, "/", 3)
	if strings.HasPrefix(request, "@") {
		if len(parts) < 2 || parts[1] == "" {
			return "", "", false
		}
		name = parts[0] + "/" + parts[1]
		if len(parts) == 3 {
			sub = "./" + parts[2]
		}
	} else {
		name = parts[0]
		if len(parts) > 1 {
			sub = "./" + strings.Join(parts[1:], "/")
		}
	}
	if sub == "" {
		sub = "."
	}
	if name == "" || strings.HasPrefix(name, ".") || strings.ContainsAny(name, "\\%") {
		return "", "", false
	}
	return name, sub, true
}

// NodeModulePaths lists the node_modules directories searched from dir.
func NodeModulePaths(dir string) []string {
	var out []string
	d := path.Clean(dir)
	for {
		if path.Base(d) != "node_modules" {
			out = append(out, path.Join(d, "node_modules"))
		}
		if d == "/" {
			break
		}
		d = path.Dir(d)
	}
	return out
}

func (r *Resolver) loadNodeModules(request, dir, kind string) (string, error) {
	name, sub, ok := splitPackage(request)
	if !ok {
		return "", &NotFoundError{request}
	}
	for _, nm := range NodeModulePaths(dir) {
		pkgDir := path.Join(nm, name)
		if r.fs.Kind(pkgDir) != Dir {
			// A file package ("node_modules/x.js").
			if sub == "." {
				if f := r.loadAsFile(pkgDir); f != "" {
					return f, nil
				}
			}
			continue
		}
		if p := r.readPackage(pkgDir); p != nil && p.Exports != nil {
			return r.packageExports(p, sub, kind, request)
		}
		x := path.Join(nm, request)
		if f := r.loadAsFile(x); f != "" {
			return f, nil
		}
		if f := r.loadAsDirectory(x); f != "" {
			return f, nil
		}
	}
	return "", nil
}

func (r *Resolver) loadSelf(request, dir, kind string) (string, error) {
	p := r.PackageScope(dir)
	if p == nil || p.Exports == nil || p.Name == "" {
		return "", nil
	}
	if request != p.Name && !strings.HasPrefix(request, p.Name+"/") {
		return "", nil
	}
	return r.packageExports(p, "."+strings.TrimPrefix(request, p.Name), kind, request)
}

// packageExports is PACKAGE_EXPORTS_RESOLVE.
func (r *Resolver) packageExports(p *Package, sub, kind, request string) (string, error) {
	exports, err := decodeOrdered(p.Exports)
	if err != nil {
		return "", &CodedError{"ERR_INVALID_PACKAGE_CONFIG", fmt.Sprintf("Invalid package config %s/package.json.", p.Dir)}
	}
	// exports is "sugar" (a target) unless it is an object of "." keys.
	if m, ok := exports.(map[string]any); ok {
		keys := userKeys(m)
		dots := 0
		for _, k := range keys {
			if strings.HasPrefix(k, ".") {
				dots++
			}
		}
		if dots == 0 {
			exports = map[string]any{".": m}
		} else if dots != len(keys) {
			return "", &CodedError{"ERR_INVALID_PACKAGE_CONFIG", fmt.Sprintf("Invalid package config %s/package.json. \"exports\" cannot contain some keys starting with '.' and some not.", p.Dir)}
		}
	} else {
		exports = map[string]any{".": exports}
	}
	m := exports.(map[string]any)
	f, err := r.matchMap(p.Dir, m, sub, kind, false)
	if err != nil {
		return "", err
	}
	if f == "" {
		if sub == "." {
			return "", &CodedError{"ERR_PACKAGE_PATH_NOT_EXPORTED", fmt.Sprintf("No \"exports\" main defined in %s/package.json", p.Dir)}
		}
		return "", &CodedError{"ERR_PACKAGE_PATH_NOT_EXPORTED", fmt.Sprintf("Package subpath '%s' is not defined by \"exports\" in %s/package.json", sub, p.Dir)}
	}
	if r.fs.Kind(f) != File {
		return "", &NotFoundError{request}
	}
	return f, nil
}

// packageImports is PACKAGE_IMPORTS_RESOLVE for "#name" requests.
func (r *Resolver) packageImports(request, dir, kind string) (string, error) {
	if request == "#" || strings.HasPrefix(request, "#/") {
		return "", &CodedError{"ERR_INVALID_MODULE_SPECIFIER", fmt.Sprintf("Invalid module \"%s\" is not a valid internal imports specifier name", request)}
	}
	p := r.PackageScope(dir)
	if p != nil && p.Imports != nil {
		v, err := decodeOrdered(p.Imports)
		if imports, ok := v.(map[string]any); ok && err == nil {
			f, err := r.matchMap(p.Dir, imports, request, kind, true)
			if err != nil {
				return "", err
			}
			if f != "" {
				if r.fs.Kind(f) != File {
					return "", &NotFoundError{request}
				}
				return f, nil
			}
		}
	}
	where := "."
	if p != nil {
		where = p.Dir
	}
	return "", &CodedError{"ERR_PACKAGE_IMPORT_NOT_DEFINED", fmt.Sprintf("Package import specifier \"%s\" is not defined in package %s/package.json", request, where)}
}

// matchMap is PACKAGE_IMPORTS_EXPORTS_RESOLVE: an exact key, else the
// longest matching pattern key with one "*".
func (r *Resolver) matchMap(pkgDir string, m map[string]any, key, kind string, imports bool) (string, error) {
	if len(m) > maxExportKeys {
		return "", &CodedError{"ERR_INVALID_PACKAGE_CONFIG", "package.json \"exports\" is too large"}
	}
	if t, ok := m[key]; ok && key != orderKey && !strings.Contains(key, "*") {
		return r.target(pkgDir, t, "", false, kind, imports, 0)
	}
	keys := make([]string, 0, len(m))
	for _, k := range userKeys(m) {
		if strings.Count(k, "*") == 1 {
			keys = append(keys, k)
		}
	}
	// PATTERN_KEY_COMPARE: longer prefix first, then longer key.
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		ia, ib := strings.IndexByte(a, '*'), strings.IndexByte(b, '*')
		if ia != ib {
			return ia > ib
		}
		return len(a) > len(b)
	})
	for _, k := range keys {
		star := strings.IndexByte(k, '*')
		prefix, suffix := k[:star], k[star+1:]
		if key != prefix && strings.HasPrefix(key, prefix) && len(key) >= len(k) && strings.HasSuffix(key, suffix) {
			match := key[len(prefix) : len(key)-len(suffix)]
			return r.target(pkgDir, m[k], match, true, kind, imports, 0)
		}
	}
	return "", nil
}

var errInvalidTarget = errors.New("invalid target")

// target is PACKAGE_TARGET_RESOLVE.
func (r *Resolver) target(pkgDir string, t any, match string, pattern bool, kind string, imports bool, depth int) (string, error) {
	if depth > maxTargetDepth {
		return "", &CodedError{"ERR_INVALID_PACKAGE_TARGET", "package.json target nesting is too deep"}
	}
	switch v := t.(type) {
	case string:
		if !strings.HasPrefix(v, "./") {
			if imports && !strings.HasPrefix(v, "../") && !strings.HasPrefix(v, "/") {
				// A bare specifier target of "imports" resolves as a
				// package.
				spec := v
				if pattern {
					spec = strings.ReplaceAll(v, "*", match)
				}
				f, err := r.loadNodeModules(spec, pkgDir, kind)
				if err != nil {
					return "", err
				}
				return f, nil
			}
			return "", &CodedError{"ERR_INVALID_PACKAGE_TARGET", fmt.Sprintf("Invalid \"exports\" target %q defined in the package config %s/package.json", v, pkgDir)}
		}
		if invalidSegments(v[2:]) {
			return "", &CodedError{"ERR_INVALID_PACKAGE_TARGET", fmt.Sprintf("Invalid \"exports\" target %q defined in the package config %s/package.json", v, pkgDir)}
		}
		if pattern {
			if invalidSegments(match) {
				return "", &CodedError{"ERR_INVALID_MODULE_SPECIFIER", fmt.Sprintf("Invalid module %q", match)}
			}
			v = strings.ReplaceAll(v, "*", match)
		}
		resolved := path.Join(pkgDir, v)
		if resolved != pkgDir && !strings.HasPrefix(resolved, pkgDir+"/") {
			return "", &CodedError{"ERR_INVALID_PACKAGE_TARGET", fmt.Sprintf("Invalid \"exports\" target %q defined in the package config %s/package.json", v, pkgDir)}
		}
		return resolved, nil
	case map[string]any:
		// Conditions in object order: encoding/json loses it, so the
		// raw order is recovered by the caller through orderedKeys.
		for _, k := range orderedConditionKeys(v) {
			if k == "default" || contains(conditions(kind), k) {
				f, err := r.target(pkgDir, v[k], match, pattern, kind, imports, depth+1)
				if err != nil {
					return "", err
				}
				if f != "" {
					return f, nil
				}
			}
		}
		return "", nil
	case []any:
		var last error
		for _, e := range v {
			f, err := r.target(pkgDir, e, match, pattern, kind, imports, depth+1)
			if err != nil {
				last = err
				continue
			}
			if f != "" {
				return f, nil
			}
		}
		if last != nil {
			return "", last
		}
		return "", nil
	case nil:
		return "", nil
	}
	return "", &CodedError{"ERR_INVALID_PACKAGE_TARGET", fmt.Sprintf("Invalid \"exports\" target in %s/package.json", pkgDir)}
}

func invalidSegments(s string) bool {
	for _, seg := range strings.Split(s, "/") {
		switch strings.ToLower(seg) {
		case ".", "..", "node_modules":
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// orderedConditionKeys returns the keys of a conditions object in
// document order (see decodeOrdered).
func orderedConditionKeys(m map[string]any) []string {
	keys := userKeys(m)
	if _, ok := m[orderKey].([]string); !ok {
		sort.Strings(keys)
	}
	return keys
}

// FileURLToPath converts a file: URL to a path.
func FileURLToPath(u string) (string, error) {
	rest := strings.TrimPrefix(u, "file://")
	if i := strings.IndexByte(rest, '/'); i > 0 {
		host := rest[:i]
		if host != "localhost" {
			return "", &CodedError{"ERR_INVALID_FILE_URL_HOST", "File URL host must be \"localhost\" or empty on linux"}
		}
		rest = rest[i:]
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	if strings.Contains(strings.ToLower(rest), "%2f") {
		return "", &CodedError{"ERR_INVALID_FILE_URL_PATH", "File URL path must not include encoded / characters"}
	}
	out, err := unescape(rest)
	if err != nil {
		return "", &CodedError{"ERR_INVALID_URL", "Invalid URL"}
	}
	return out, nil
}

func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 >= len(s) {
				return "", errInvalidTarget
			}
			h, ok1 := unhex(s[i+1])
			l, ok2 := unhex(s[i+2])
			if !ok1 || !ok2 {
				return "", errInvalidTarget
			}
			b.WriteByte(h<<4 | l)
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String(), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
