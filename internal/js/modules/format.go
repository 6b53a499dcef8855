package modules

import (
	"path"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// Format is how a module file is loaded.
type Format string

// Formats.
const (
	CommonJS   Format = "commonjs"
	ESM        Format = "module"
	JSON       Format = "json"
	Addon      Format = "addon"
	TSCommonJS Format = "commonjs-typescript"
	TSModule   Format = "module-typescript"
)

// FormatOf returns the format of file, from its extension and the "type"
// of its package scope, as Node 22 decides it.
func (r *Resolver) FormatOf(file string) Format {
	switch path.Ext(file) {
	case ".mjs":
		return ESM
	case ".cjs":
		return CommonJS
	case ".json":
		return JSON
	case ".node":
		return Addon
	case ".mts":
		return TSModule
	case ".cts":
		return TSCommonJS
	case ".ts":
		if r.scopeType(file) == "module" {
			return TSModule
		}
		return TSCommonJS
	}
	if r.scopeType(file) == "module" {
		return ESM
	}
	return CommonJS
}

func (r *Resolver) scopeType(file string) string {
	if p := r.PackageScope(path.Dir(file)); p != nil {
		return p.Type
	}
	return ""
}

// LooksLikeESMError reports whether a V8 syntax error of a file compiled
// as CommonJS means it is an ES module (Node 22 then reloads it as one:
// "detect-module").
func LooksLikeESMError(msg string) bool {
	for _, s := range []string{
		"Cannot use import statement outside a module",
		"Unexpected token 'export'",
		"Cannot use 'import.meta' outside a module",
		"await is only valid in async functions and the top level bodies of modules",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// ImportMetaName is the variable an ES module's import.meta becomes
// after Transform; the CommonJS wrapper passes it in.
const ImportMetaName = "__secexec_import_meta"

// TransformError is a syntax error found by the transform, with the
// position in the original source.
type TransformError struct {
	File   string
	Line   int // 1-based
	Column int // 0-based
	Text   string
	Source string // the offending line
}

func (e *TransformError) Error() string { return e.Text }

// Transform turns ES module or TypeScript source into CommonJS that the
// runtime's module wrapper runs: import/export become require/exports,
// import() becomes a promise of require, import.meta becomes
// ImportMetaName, and TypeScript types are stripped.
func Transform(src, filename string, f Format) (string, error) {
	loader := api.LoaderJS
	if f == TSModule || f == TSCommonJS {
		loader = api.LoaderTS
	}
	res := api.Transform(src, api.TransformOptions{
		Loader:     loader,
		Format:     api.FormatCommonJS,
		Target:     api.ESNext,
		Platform:   api.PlatformNode,
		Sourcefile: filename,
		Charset:    api.CharsetUTF8,
		Define:     map[string]string{"import.meta": ImportMetaName},
		LogLevel:   api.LogLevelSilent,
		Supported:  map[string]bool{"dynamic-import": false},
		TsconfigRaw: `{"compilerOptions":{"verbatimModuleSyntax":false,"experimentalDecorators":false,
			"useDefineForClassFields":true}}`,
	})
	if len(res.Errors) > 0 {
		m := res.Errors[0]
		te := &TransformError{File: filename, Text: m.Text}
		if m.Location != nil {
			te.Line, te.Column, te.Source = m.Location.Line, m.Location.Column, m.Location.LineText
		}
		return "", te
	}
	return esmInterop(string(res.Code)), nil
}

// ESMMarker is a symbol (Symbol.for(ESMMarker)) the runtime sets on the
// exports of every ES module it loaded.
const ESMMarker = "secexec.esm"

// esmInterop adjusts esbuild's import helper: in a .mjs file (node mode)
// esbuild gives a default import the whole module.exports, which is
// Node's rule for importing CommonJS; for an ES module that was itself
// transformed (its exports carry ESMMarker) the default import must be
// its default export, as Node links ES modules.
func esmInterop(code string) string {
	return strings.Replace(code, "isNodeMode || !mod || !mod.__esModule",
		`isNodeMode && !(mod && mod[Symbol.for("`+ESMMarker+`")]) || !mod || !mod.__esModule`, 1)
}
