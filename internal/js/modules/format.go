package modules

import (
	"path"
	"strings"
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
