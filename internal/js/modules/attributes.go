package modules

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// Import attributes (`with { type: 'json' }`): esbuild's CommonJS output
// drops them, so the loader could not tell an import that declares a JSON
// module from one that does not (Node 22 refuses the latter). esbuild's
// parser reads them, though: for a module that may have any, a second,
// bundling parse reports each import's attributes to a resolve hook, and
// the transformed code's import calls get the type appended to their
// specifier after AttrSep, which no path or URL contains. The loader
// (module_esm.js) splits it off and checks it as Node does.

// AttrSep separates a specifier from its import attribute type in the
// transformed code.
const AttrSep = "\x00"

// attrHint finds what could be an import attribute clause (static, or
// the options of import()); only modules that have one pay for the
// second parse.
var attrHint = regexp.MustCompile(`\b(?:with|assert)\s*:?\s*\{`)

// maxAttrImports bounds the imports read for one module.
const maxAttrImports = 1 << 16

// attrs are the type attributes of a module's imports with a literal
// specifier, in source order per specifier ("" for an import without
// one), static imports and import() apart.
type attrs struct {
	static, dynamic map[string][]string
}

// importTypes reads the import attributes of src, or returns nil when it
// has none (no clause that could be one). esbuild's metafile lists every
// import record with its attributes, in source order.
func importTypes(src, filename string, ts bool) *attrs {
	if !attrHint.MatchString(src) {
		return nil
	}
	loader := api.LoaderJS
	if ts {
		loader = api.LoaderTS
	}
	res := api.Build(api.BuildOptions{
		Stdin:    &api.StdinOptions{Contents: src, Sourcefile: filename, Loader: loader},
		Bundle:   true,
		Write:    false,
		Metafile: true,
		Format:   api.FormatESModule,
		Platform: api.PlatformNode,
		Target:   api.ESNext,
		LogLevel: api.LogLevelSilent,
		Plugins: []api.Plugin{{Name: "secexec-import-attributes", Setup: func(b api.PluginBuild) {
			b.OnResolve(api.OnResolveOptions{Filter: `.*`}, func(r api.OnResolveArgs) (api.OnResolveResult, error) {
				return api.OnResolveResult{Path: r.Path, External: true}, nil
			})
		}}},
	})
	var meta struct {
		Inputs map[string]struct {
			Imports []struct {
				Path string            `json:"path"`
				Kind string            `json:"kind"`
				With map[string]string `json:"with"`
			} `json:"imports"`
		} `json:"inputs"`
	}
	if len(res.Errors) > 0 || json.Unmarshal([]byte(res.Metafile), &meta) != nil {
		return nil
	}
	a := &attrs{static: map[string][]string{}, dynamic: map[string][]string{}}
	n := 0
	for _, in := range meta.Inputs {
		for _, imp := range in.Imports {
			m := a.static
			switch imp.Kind {
			case "import-statement":
			case "dynamic-import":
				m = a.dynamic
			default:
				continue
			}
			if n++; n > maxAttrImports {
				return a
			}
			m[imp.Path] = append(m[imp.Path], attrMark(imp.With))
		}
	}
	return a
}

// attrMark is what the loader is told of an import's attributes: its
// type, or the first other attribute (Node refuses any) as
// "\x01key\x01value".
func attrMark(with map[string]string) string {
	var keys []string
	for k := range with {
		if k != "type" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return with["type"]
	}
	slices.Sort(keys)
	return "\x01" + keys[0] + "\x01" + with[keys[0]]
}

// markAttributes rewrites the import calls of code, a module's
// transformed code in which static imports call static (none when "")
// and import() calls dynamic (up to the call's opening parenthesis; it
// ends with static when there is one): the n-th call with a literal
// specifier gets the type of that specifier's n-th import appended ("" if
// it has none), in source order as esbuild prints; an import() call it
// cannot match (a computed specifier) calls dynamic's "any" property
// instead, which checks no attributes, since what it was given is not
// known here.
func markAttributes(code, static, dynamic string, a *attrs) string {
	if a == nil {
		return code
	}
	find, prefix := dynamic, ""
	if static != "" {
		find, prefix = static, dynamic[:len(dynamic)-len(static)]
	}
	used := map[string]int{}
	var b strings.Builder
	for {
		i := strings.Index(code, find)
		if i < 0 {
			b.WriteString(code)
			return b.String()
		}
		isDynamic := static == "" || strings.HasSuffix(code[:i], prefix)
		if !isDynamic && i > 0 && (isIdentByte(code[i-1]) || code[i-1] == '.') {
			// x.require(, __require(: not the module's import function.
			b.WriteString(code[:i+len(find)])
			code = code[i+len(find):]
			continue
		}
		b.WriteString(code[:i])
		code = code[i+len(find):]
		m := a.static
		if isDynamic {
			m = a.dynamic
		}
		lit := leadingString(code)
		spec, ok := unquote(lit)
		types := m[spec]
		key := strconv.FormatBool(isDynamic) + spec
		if !ok || used[key] >= len(types) || !strings.HasPrefix(code[len(lit):], ")") {
			if isDynamic {
				b.WriteString(find[:len(find)-1] + ".any(")
			} else {
				b.WriteString(find)
			}
			continue
		}
		b.WriteString(find)
		t := types[used[key]]
		used[key]++
		if strings.ContainsAny(t, "\"\\\n\r\u2028\u2029") {
			continue
		}
		b.WriteString(lit[:len(lit)-1] + `\x00` + strings.ReplaceAll(t, "\x01", `\x01`) + `"`)
		code = code[len(lit):]
	}
}

// unquote reads a string literal as esbuild prints a specifier.
func unquote(lit string) (string, bool) {
	if lit == "" {
		return "", false
	}
	s, err := strconv.Unquote(lit)
	return s, err == nil
}

// leadingString is the double-quoted string literal s starts with, or "".
func leadingString(s string) string {
	if !strings.HasPrefix(s, `"`) {
		return ""
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return s[:i+1]
		case '\n':
			return ""
		}
	}
	return ""
}
