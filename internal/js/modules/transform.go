package modules

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// Names the transformed code uses, which the runtime's module wrapper
// defines as parameters.
const (
	// ImportMetaName is the variable an ES module's import.meta becomes.
	ImportMetaName = "__secexec_import_meta"
	// UserRequireName is what an ES module's own references to require
	// become, so that the require calls the transform makes for import
	// and import() (which go to the ES module loader) stay apart from
	// them.
	UserRequireName = "__secexec_require"
	// DepsName is the function a module with top-level await calls once
	// its imports are linked: it evaluates them and returns a promise
	// when one of them is still evaluating asynchronously.
	DepsName = "__secexec_deps"
	// ImportName is what import() in CommonJS code calls (see
	// Transform).
	ImportName = "__secexec_import"
)

// ESMMarker is a symbol (Symbol.for(ESMMarker)) the runtime sets on module
// namespace objects: the transformed code's interop helper passes them
// through untouched.
const ESMMarker = "secexec.esm"

// StarMarker is a symbol (Symbol.for(StarMarker)) holding, on a module
// namespace object that is still filling in (a CommonJS module or a
// module with top-level await imported before it ran), a function that
// registers an `export * from` of it, so that names it gains later reach
// the re-exporting module too.
const StarMarker = "secexec.star"

// The link marker is put before an ES module's source. esbuild hoists
// the module's imports above it, so in the output it separates linking
// (exports defined, imports required) from the module's body.
const linkMarker = "__secexec_link__();"

// What the link marker becomes: a synchronous module is a generator that
// yields between linking and evaluation (the runtime evaluates the
// imports in between); a module with top-level await is an async
// function that evaluates its imports itself, awaiting only when one of
// them is asynchronous, so that its body starts synchronously otherwise.
const (
	linkSync  = "yield;"
	linkAsync = "{ const __secexec_p = " + DepsName + "(); if (__secexec_p) await __secexec_p; }"
)

// Module is the result of Transform: code for the runtime's module
// wrapper, with what is needed to map its positions back to the source.
type Module struct {
	Code string `json:"code"`
	// Map is esbuild's source map (JSON) of Code, "" when there is none.
	Map string `json:"map,omitempty"`
	// ESM says the code is an ES module (a link point, run by the ES
	// module loader); Async that it has top-level await.
	ESM   bool `json:"esm,omitempty"`
	Async bool `json:"async,omitempty"`
	// Import says CommonJS code calls ImportName for import().
	Import bool `json:"import,omitempty"`
	// SrcShift is how many columns the link marker added to the first
	// line of the source esbuild saw.
	SrcShift int `json:"srcShift,omitempty"`
	// Shifts are the columns inserted into Code after esbuild made the
	// map (top-level await restored).
	Shifts []Shift `json:"shifts,omitempty"`
	// TLALine and TLACol are the position (1-based line, 0-based byte
	// column) of the module's first top-level await, for the warning
	// about one left unsettled at exit.
	TLALine int `json:"tlaLine,omitempty"`
	TLACol  int `json:"tlaCol,omitempty"`
}

// Shift is an insertion of Delta columns at (Line, Col) of Code, both
// 0-based, the column in UTF-16 units.
type Shift struct {
	Line  int `json:"l"`
	Col   int `json:"c"`
	Delta int `json:"d"`
}

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

const tlaMessage = `Top-level await is currently not supported with the "cjs" output format`

// Transform turns ES module or TypeScript source into code for the
// runtime's module wrapper. CommonJS TypeScript keeps the CommonJS
// wrapper with types stripped. An ES module becomes CommonJS-style code
// whose import statements are hoisted above a link point (see linkSync
// and linkAsync): import and import() become calls of the wrapper's
// require, import.meta becomes ImportMetaName, the module's own require
// becomes UserRequireName. Top-level await, which esbuild cannot emit as
// CommonJS, is hidden from it and restored in the output, and the module
// is then marked Async.
func Transform(src, filename string, f Format) (*Module, error) {
	ts := f == TSModule || f == TSCommonJS
	if f != ESM && f != TSModule {
		res := api.Transform(src, transformOptions(filename, ts, false))
		if len(res.Errors) > 0 {
			return nil, transformError(filename, res.Errors[0], 0)
		}
		code, shifts := dynamicImports(string(res.Code))
		if len(shifts) > 0 {
			code = markAttributes(code, "", redirectedImport, importTypes(src, filename, ts))
		}
		return &Module{Code: patchHelpers(code), Map: string(res.Map), Shifts: shifts, Import: len(shifts) > 0}, nil
	}
	body := strings.TrimPrefix(src, "\uFEFF")
	if strings.HasPrefix(body, "#!") {
		body = "//" + body[2:]
	}
	in := linkMarker + body
	opts := transformOptions(filename, ts, true)
	res := api.Transform(in, opts)
	m := &Module{ESM: true, SrcShift: len(linkMarker)}
	var hidden *hiddenTLA
	if len(res.Errors) > 0 {
		var tla []api.Message
		for _, e := range res.Errors {
			if e.Text != tlaMessage || e.Location == nil {
				return nil, transformError(filename, e, len(linkMarker))
			}
			tla = append(tla, e)
		}
		h, err := hideTLA(in, tla)
		if err != nil {
			return nil, transformError(filename, api.Message{Text: err.Error(), Location: tla[0].Location}, len(linkMarker))
		}
		res = api.Transform(h.src, opts)
		if len(res.Errors) > 0 {
			return nil, transformError(filename, res.Errors[0], len(linkMarker))
		}
		hidden, m.Async = h, true
		m.TLALine, m.TLACol = tla[0].Location.Line, tla[0].Location.Column
		if m.TLALine == 1 {
			m.TLACol = max(0, m.TLACol-len(linkMarker))
		}
	}
	code := string(res.Code)
	i := strings.Index(code, linkMarker)
	if i < 0 || (i > 0 && code[i-1] != '\n') {
		return nil, &TransformError{File: filename, Line: 1, Text: "internal error: module link point not found"}
	}
	link := linkSync
	if m.Async {
		link = linkAsync
	}
	code = code[:i] + link + code[i+len(linkMarker):]
	if hidden != nil {
		var err error
		if code, m.Shifts, err = hidden.restore(code); err != nil {
			return nil, transformError(filename, api.Message{Text: err.Error(), Location: hidden.first}, len(linkMarker))
		}
	}
	code = markAttributes(code, "require(", loweredImport, importTypes(body, filename, ts))
	m.Code = patchHelpers(code) + defaultName(code, src)
	m.Map = string(res.Map)
	return m, nil
}

var defaultExportRE = regexp.MustCompile(`(?m)^  default: \(\) => ([A-Za-z_$][\w$]*_default),?$`)

// defaultName names an anonymous default export "default", as Node does:
// esbuild gives it a variable named after the file, which would otherwise
// be its name. It returns code to run after the module's body.
func defaultName(code, src string) string {
	m := defaultExportRE.FindStringSubmatch(code)
	if m == nil || strings.Contains(src, m[1]) {
		return ""
	}
	return "\n;if (typeof " + m[1] + " === \"function\" && " + m[1] + ".name === \"" + m[1] + "\") Object.defineProperty(" + m[1] +
		", \"name\", { value: \"default\", configurable: true });"
}

func transformOptions(filename string, ts, esm bool) api.TransformOptions {
	loader := api.LoaderJS
	if ts {
		loader = api.LoaderTS
	}
	define := map[string]string{"import.meta": ImportMetaName}
	if esm {
		define["require"] = UserRequireName
	}
	return api.TransformOptions{
		Loader:         loader,
		Format:         api.FormatCommonJS,
		Target:         api.ESNext,
		Platform:       api.PlatformNode,
		Sourcefile:     filename,
		Sourcemap:      api.SourceMapExternal,
		SourcesContent: api.SourcesContentExclude,
		Charset:        api.CharsetUTF8,
		Define:         define,
		LogLevel:       api.LogLevelSilent,
		Supported:      map[string]bool{"dynamic-import": false},
		TsconfigRaw: `{"compilerOptions":{"verbatimModuleSyntax":false,"experimentalDecorators":false,
			"useDefineForClassFields":true}}`,
	}
}

// transformError converts an esbuild message; shift is the length of the
// link marker before the source's first line.
func transformError(filename string, m api.Message, shift int) *TransformError {
	te := &TransformError{File: filename, Text: m.Text}
	if m.Text == tlaMessage {
		// A CommonJS module (.cts, or .ts outside "type": "module").
		te.Text = "await is only valid in async functions and the top level bodies of modules"
	}
	if l := m.Location; l != nil {
		te.Line, te.Column, te.Source = l.Line, l.Column, l.LineText
		if l.Line == 1 && shift > 0 {
			te.Column = max(0, te.Column-shift)
			te.Source = strings.TrimPrefix(te.Source, linkMarker)
		}
	}
	return te
}

// esbuild lowers import() to this when it makes CommonJS; in CommonJS
// code, where require is the module's own, the call is redirected to
// the ES module loader's import, which evaluates the module as import()
// does (asynchronously, with the namespace as result).
const (
	loweredImport    = "Promise.resolve().then(() => __toESM(require("
	redirectedImport = "Promise.resolve().then(() => __toESM(" + ImportName + "("
)

func dynamicImports(code string) (string, []Shift) {
	var edits []edit
	for i := 0; ; {
		j := strings.Index(code[i:], loweredImport)
		if j < 0 {
			break
		}
		edits = append(edits, edit{i + j, loweredImport, redirectedImport})
		i += j + len(loweredImport)
	}
	if len(edits) == 0 {
		return code, nil
	}
	out, shifts, _ := applyEdits(code, edits)
	return out, shifts
}

// Helpers of esbuild's CommonJS output the ES module loader changes:
// __toESM passes module namespace objects through (so a namespace
// import is the namespace itself and default imports of CommonJS are
// resolved by the loader, as Node does), and __reExport registers with
// namespaces that are still filling in.
var helperPatches = [...][2]string{
	{"var __toESM = (mod, isNodeMode, target) => (",
		`var __toESM = (mod, isNodeMode, target) => mod && mod[Symbol.for("` + ESMMarker + `")] ? mod : (`},
	{"var __reExport = (target, mod, secondTarget) => (",
		`var __reExport = (target, mod, secondTarget) => (mod && typeof mod[Symbol.for("` + StarMarker + `")] === "function" && mod[Symbol.for("` + StarMarker + `")](target, secondTarget), `},
}

func patchHelpers(code string) string {
	for _, p := range helperPatches {
		if i := strings.Index(code, p[0]); i >= 0 && (i == 0 || code[i-1] == '\n') {
			code = code[:i] + p[1] + code[i+len(p[0]):]
		}
	}
	return code
}

// hiddenTLA is an ES module's source with its top-level awaits made
// invisible to esbuild, in edits of the same length so that every
// position stays where it was: `await x` becomes `<marker>x` (a run of
// unary operators esbuild prints back unchanged) and `for await (` becomes
// `$N: for   (` (a uniquely labelled for statement).
type hiddenTLA struct {
	src    string
	marker string
	awaits int
	labels []string
	first  *api.Location
}

// awaitMarkers are candidates for hiding `await`: five characters (as
// many as "await"), unary operators of the same precedence that esbuild
// neither folds nor reformats. The first one absent from the source is
// used.
var awaitMarkers = []string{"~~~~~", "~-~-~", "-~-~-", "~+~+~"}

// labelChars name the labels of hidden `for await` loops.
const labelChars = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

func hideTLA(src string, msgs []api.Message) (*hiddenTLA, error) {
	h := &hiddenTLA{first: msgs[0].Location}
	for _, mk := range awaitMarkers {
		if !strings.Contains(src, mk) {
			h.marker = mk
			break
		}
	}
	if h.marker == "" {
		return nil, fmt.Errorf("top-level await cannot be compiled in this module")
	}
	starts := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	b := []byte(src)
	seen := map[int]bool{}
	for _, m := range msgs {
		l := m.Location
		if l.Line < 1 || l.Line > len(starts) {
			return nil, fmt.Errorf("top-level await: bad position")
		}
		off := starts[l.Line-1] + l.Column
		if off < 0 || off+5 > len(src) || src[off:off+5] != "await" || seen[off] {
			return nil, fmt.Errorf("top-level await: bad position")
		}
		seen[off] = true
		j := off - 1
		for j >= 0 && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n' || src[j] == '\r') {
			j--
		}
		if j >= 2 && src[j-2:j+1] == "for" && (j < 3 || !isIdentByte(src[j-3])) {
			if len(h.labels) == len(labelChars) {
				return nil, fmt.Errorf("too many top-level for await loops")
			}
			label := "$" + labelChars[len(h.labels):len(h.labels)+1]
			h.labels = append(h.labels, label)
			copy(b[j-2:], label+":")
			copy(b[off:], "for  ")
			continue
		}
		copy(b[off:], h.marker)
		h.awaits++
	}
	h.src = string(b)
	return h, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// restore puts the hidden awaits back into esbuild's output and reports
// the columns that moved.
func (h *hiddenTLA) restore(code string) (string, []Shift, error) {
	var edits []edit
	if n := strings.Count(code, h.marker); n != h.awaits {
		return "", nil, fmt.Errorf("top-level await cannot be compiled in this module")
	}
	for i := 0; ; {
		j := strings.Index(code[i:], h.marker)
		if j < 0 {
			break
		}
		edits = append(edits, edit{i + j, h.marker, "await "})
		i += j + len(h.marker)
	}
	for _, l := range h.labels {
		pat := l + ": for "
		if strings.Count(code, pat) != 1 {
			return "", nil, fmt.Errorf("top-level for await cannot be compiled in this module")
		}
		edits = append(edits, edit{strings.Index(code, pat), pat, "for await "})
	}
	return applyEdits(code, edits)
}

// edit replaces from, found at byte offset at, with to.
type edit struct {
	at       int
	from, to string
}

// applyEdits makes non-overlapping edits and reports the columns they
// moved.
func applyEdits(code string, edits []edit) (string, []Shift, error) {
	sort.Slice(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
	var out strings.Builder
	out.Grow(len(code) + 16*len(edits))
	var shifts []Shift
	line, col, last := 0, 0, 0 // col: UTF-16 column at the end of out
	for _, e := range edits {
		if e.at < last {
			return "", nil, fmt.Errorf("top-level await cannot be compiled in this module")
		}
		seg := code[last:e.at]
		out.WriteString(seg)
		if k := strings.LastIndexByte(seg, '\n'); k >= 0 {
			line += strings.Count(seg, "\n")
			col = utf16Len(seg[k+1:])
		} else {
			col += utf16Len(seg)
		}
		out.WriteString(e.to)
		if d := len(e.to) - len(e.from); d != 0 {
			shifts = append(shifts, Shift{Line: line, Col: col, Delta: d})
		}
		col += utf16Len(e.to)
		last = e.at + len(e.from)
	}
	out.WriteString(code[last:])
	return out.String(), shifts, nil
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// Original maps a position of m.Code (1-based line and column, as V8
// reports them, with the wrapper's head already taken off the first
// line's column) to the source through sm, the decoded m.Map. It returns
// 1-based line and column.
func (m *Module) Original(sm *SourceMap, line, col int) (int, int, bool) {
	l, c := line-1, col-1
	if l < 0 || c < 0 {
		return 0, 0, false
	}
	d := 0
	for _, s := range m.Shifts {
		if s.Line == l && s.Col < c {
			d += s.Delta
		}
	}
	sl, sc, ok := sm.Lookup(l, c-d)
	if !ok {
		return 0, 0, false
	}
	if sl == 0 {
		sc = max(0, sc-m.SrcShift)
	}
	return sl + 1, sc + 1, true
}

// MarshalBinary encodes m for a cache: the small fields as JSON, then the
// code and the map as they are (JSON would escape and unescape them).
func (m *Module) MarshalBinary() ([]byte, error) {
	small := *m
	small.Code, small.Map = "", ""
	meta, err := json.Marshal(&small)
	if err != nil {
		return nil, fmt.Errorf("modules: encode module: %w", err)
	}
	b := make([]byte, 0, 2*binary.MaxVarintLen64+len(meta)+len(m.Code)+len(m.Map))
	b = binary.AppendUvarint(b, uint64(len(meta)))
	b = append(b, meta...)
	b = binary.AppendUvarint(b, uint64(len(m.Code)))
	b = append(b, m.Code...)
	return append(b, m.Map...), nil
}

var errBadModule = errors.New("modules: malformed cached module")

// UnmarshalBinary decodes what MarshalBinary made.
func (m *Module) UnmarshalBinary(b []byte) error {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return errBadModule
	}
	meta, rest := b[k:k+int(n)], b[k+int(n):]
	var out Module
	if err := json.Unmarshal(meta, &out); err != nil {
		return fmt.Errorf("modules: decode module: %w", err)
	}
	n, k = binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(rest)-k) {
		return errBadModule
	}
	out.Code = string(rest[k : k+int(n)])
	out.Map = string(rest[k+int(n):])
	*m = out
	return nil
}
