package modules

import (
	"errors"
	"path"
	"strings"
	"testing"
)

// mapFS is an in-memory FS: files by path; directories are implied.
type mapFS map[string]string

func (m mapFS) Kind(p string) Kind {
	if _, ok := m[p]; ok {
		return File
	}
	prefix := strings.TrimSuffix(p, "/") + "/"
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return Dir
		}
	}
	return Missing
}

func (m mapFS) ReadFile(p string) ([]byte, error) {
	if s, ok := m[p]; ok {
		return []byte(s), nil
	}
	return nil, errors.New("ENOENT")
}

func (m mapFS) Realpath(p string) (string, error) { return path.Clean(p), nil }

var tree = mapFS{
	"/app/main.js":                              "",
	"/app/lib/index.js":                         "",
	"/app/data.json":                            "",
	"/app/package.json":                         `{"name":"app","type":"module","imports":{"#util":"./lib/index.js","#dep":"dep"},"exports":{".":"./main.js"}}`,
	"/app/node_modules/dep/package.json":        `{"name":"dep","main":"./lib/dep"}`,
	"/app/node_modules/dep/lib/dep.js":          "",
	"/app/node_modules/dual/package.json":       `{"exports":{".":{"import":"./m.mjs","require":"./c.cjs"},"./feature/*.js":"./src/*.js","./feature/internal/*":null,"./package.json":"./package.json"}}`,
	"/app/node_modules/dual/m.mjs":              "",
	"/app/node_modules/dual/c.cjs":              "",
	"/app/node_modules/dual/src/a.js":           "",
	"/app/node_modules/dual/src/internal/x.js":  "",
	"/app/node_modules/@scope/pkg/package.json": `{"exports":"./index.js"}`,
	"/app/node_modules/@scope/pkg/index.js":     "",
	"/app/node_modules/ordered/package.json":    `{"exports":{"node":"./node.js","default":"./default.js"}}`,
	"/app/node_modules/ordered/node.js":         "",
	"/app/node_modules/ordered/default.js":      "",
	"/app/node_modules/escape/package.json":     `{"exports":{".":"./../../../etc/passwd"}}`,
	"/node_modules/top/index.js":                "",
}

func TestResolve(t *testing.T) {
	r := NewResolver(tree)
	cases := []struct{ req, dir, kind, want, err string }{
		{"./main", "/app", Require, "/app/main.js", ""},
		{"./lib", "/app", Require, "/app/lib/index.js", ""},
		{"./data.json", "/app", Require, "/app/data.json", ""},
		{"../main.js", "/app/lib", Require, "/app/main.js", ""},
		{"dep", "/app/lib", Require, "/app/node_modules/dep/lib/dep.js", ""},
		{"dual", "/app", Require, "/app/node_modules/dual/c.cjs", ""},
		{"dual", "/app", Import, "/app/node_modules/dual/m.mjs", ""},
		{"dual/feature/a.js", "/app", Require, "/app/node_modules/dual/src/a.js", ""},
		{"dual/feature/internal/x", "/app", Require, "", "ERR_PACKAGE_PATH_NOT_EXPORTED"},
		{"dual/c.cjs", "/app", Require, "", "ERR_PACKAGE_PATH_NOT_EXPORTED"},
		{"@scope/pkg", "/app", Require, "/app/node_modules/@scope/pkg/index.js", ""},
		{"ordered", "/app", Require, "/app/node_modules/ordered/node.js", ""},
		{"escape", "/app", Require, "", "ERR_INVALID_PACKAGE_TARGET"},
		{"top", "/app/lib", Require, "/node_modules/top/index.js", ""},
		{"#util", "/app/lib", Require, "/app/lib/index.js", ""},
		{"#dep", "/app", Require, "/app/node_modules/dep/lib/dep.js", ""},
		{"#nope", "/app", Require, "", "ERR_PACKAGE_IMPORT_NOT_DEFINED"},
		{"app", "/app/lib", Require, "/app/main.js", ""},
		{"missing", "/app", Require, "", "MODULE_NOT_FOUND"},
		{"file:///app/main.js", "/", Require, "/app/main.js", ""},
	}
	for _, c := range cases {
		got, err := r.Resolve(c.req, c.dir, c.kind)
		if c.err != "" {
			var ce *CodedError
			var nf *NotFoundError
			switch {
			case errors.As(err, &ce) && ce.Code == c.err:
			case errors.As(err, &nf) && c.err == "MODULE_NOT_FOUND":
			default:
				t.Errorf("%s from %s: got %q, %v; want error %s", c.req, c.dir, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s from %s (%s): got %q, %v; want %q", c.req, c.dir, c.kind, got, err, c.want)
		}
	}
	if f := r.FormatOf("/app/lib/index.js"); f != ESM {
		t.Errorf("format %s", f)
	}
	if f := r.FormatOf("/app/node_modules/dual/c.cjs"); f != CommonJS {
		t.Errorf("format %s", f)
	}
	if f := r.FormatOf("/x.ts"); f != TSCommonJS {
		t.Errorf("format %s", f)
	}
}

// FuzzResolve resolves hostile requests against a hostile package.json:
// resolution must end with a typed result, never a panic, and never
// resolve outside the package through "exports".
func FuzzResolve(f *testing.F) {
	f.Add(`{"exports":{".":{"import":"./m.mjs","require":"./c.cjs"},"./x/*":"./src/*.js"}}`, "pkg/x/a", true)
	f.Add(`{"exports":"./index.js","main":"lib"}`, "pkg", false)
	f.Add(`{"exports":[[[[{"default":["./a.js"]}]]]]}`, "pkg", false)
	f.Add(`{"imports":{"#a/*":"./*.js"}}`, "#a/b", true)
	f.Add(`{"exports":{"./*":"./../*"}}`, "pkg/etc/passwd", false)
	f.Fuzz(func(t *testing.T, pkgJSON, req string, imp bool) {
		if len(pkgJSON) > 1<<16 || len(req) > 4096 {
			return
		}
		fs := mapFS{
			"/w/node_modules/pkg/package.json": pkgJSON,
			"/w/package.json":                  pkgJSON,
			"/w/node_modules/pkg/index.js":     "",
			"/w/node_modules/pkg/src/a.js":     "",
			"/w/a.js":                          "",
			"/secret.js":                       "",
		}
		kind := Require
		if imp {
			kind = Import
		}
		got, err := NewResolver(fs).Resolve(req, "/w", kind)
		if err != nil {
			var ce *CodedError
			var nf *NotFoundError
			if !errors.As(err, &ce) && !errors.As(err, &nf) {
				t.Fatalf("untyped error %T %v", err, err)
			}
			return
		}
		if fs.Kind(got) != File {
			t.Fatalf("resolved to %q, which is not a file", got)
		}
		if got == "/secret.js" && !strings.Contains(req, "secret") && !strings.HasPrefix(req, "#") {
			t.Fatalf("%q resolved to %q", req, got)
		}
	})
}

func FuzzDecodeOrdered(f *testing.F) {
	f.Add(`{"b":1,"a":{"c":[1,2,{"d":null}]}}`)
	f.Add(`[[[[[[[[[[]]]]]]]]]]`)
	f.Add(`{"\u0000order":1}`)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := decodeOrdered([]byte(s))
		if err != nil {
			return
		}
		if m, ok := v.(map[string]any); ok {
			_ = userKeys(m)
		}
	})
}
