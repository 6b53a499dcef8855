package modules

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/evanw/esbuild/pkg/api"
)

// wrapped is m.Code in the runtime's wrapper, as V8 compiles it.
func checkSyntax(t *testing.T, m *Module) {
	t.Helper()
	head := "(function* () {"
	if m.Async {
		head = "(async function () {"
	}
	if !m.ESM {
		head = "(function () {"
	}
	res := api.Transform(head+m.Code+"\n})", api.TransformOptions{Loader: api.LoaderJS, LogLevel: api.LogLevelSilent})
	if len(res.Errors) > 0 {
		t.Fatalf("output does not parse: %s\n%s", res.Errors[0].Text, m.Code)
	}
}

func TestTransformESM(t *testing.T) {
	src := "console.log('first');\nimport x from 'y';\nexport const z: number = x + import.meta.url.length;\nconst r = require('fs');\n"
	m, err := Transform(src, "/a.mts", TSModule)
	if err != nil {
		t.Fatal(err)
	}
	link := strings.Index(m.Code, linkSync)
	imp := strings.Index(m.Code, `require("y")`)
	first := strings.Index(m.Code, `console.log("first")`)
	if !m.ESM || m.Async || link < 0 || imp < 0 || imp > link || first < link {
		t.Fatalf("imports not hoisted above the link point:\n%s", m.Code)
	}
	if !strings.Contains(m.Code, ImportMetaName+".url") || !strings.Contains(m.Code, UserRequireName+`("fs")`) || strings.Contains(m.Code, ": number") {
		t.Fatalf("transform:\n%s", m.Code)
	}
	if !strings.Contains(m.Code, helperPatches[0][1]) {
		t.Fatalf("__toESM not patched (esbuild's helper changed?):\n%s", m.Code)
	}
	checkSyntax(t, m)

	m, err = Transform("export * from './e.mjs';\nexport const q = 1;\n", "/b.mjs", ESM)
	if err != nil || !strings.Contains(m.Code, helperPatches[1][1]) {
		t.Fatalf("__reExport not patched (esbuild's helper changed?): %v\n%v", err, m)
	}

	// A hashbang and a BOM are not code.
	m, err = Transform("\uFEFF#!/usr/bin/env node\nexport default 1;\n", "/c.mjs", ESM)
	if err != nil {
		t.Fatal(err)
	}
	checkSyntax(t, m)
}

func TestTransformTopLevelAwait(t *testing.T) {
	src := `import { a } from './a.mjs';
const v = await a(1);
for await (const k of [1]) console.log(k);
if (v) { for await (const j of [2]) { await j; } }
const w = await (v, 2) + await 3 ? await null : 1;
export default await v;
label: for await (const q of [3]) for await (const z of [q]) console.log(z);
`
	m, err := Transform(src, "/t.mjs", ESM)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Async || !strings.Contains(m.Code, linkAsync) || strings.Contains(m.Code, linkSync) {
		t.Fatalf("not async:\n%s", m.Code)
	}
	if n := strings.Count(m.Code, "for await ("); n != 4 {
		t.Errorf("%d for await loops restored:\n%s", n, m.Code)
	}
	if n := strings.Count(m.Code, "await "); n < 11 {
		t.Errorf("%d awaits:\n%s", n, m.Code)
	}
	if m.TLALine != 2 || m.TLACol != 10 {
		t.Errorf("first top-level await at %d:%d", m.TLALine, m.TLACol)
	}
	checkSyntax(t, m)

	// Many awaits (esbuild reports each), and a source that already holds
	// the first marker.
	var b strings.Builder
	b.WriteString("const s = '~~~~~';\n")
	for i := 0; i < 60; i++ {
		b.WriteString("await null;\n")
	}
	m, err = Transform(b.String(), "/many.mjs", ESM)
	if err != nil || !m.Async || strings.Count(m.Code, "await null") != 60 || !strings.Contains(m.Code, `"~~~~~"`) {
		t.Fatalf("%v\n%v", err, m)
	}
	checkSyntax(t, m)

	// CommonJS TypeScript cannot await at the top level: Node's message.
	_, err = Transform("await 1;\nexport {}\n", "/c.cts", TSCommonJS)
	var te *TransformError
	if !errors.As(err, &te) || !strings.Contains(te.Text, "await is only valid in async functions") {
		t.Fatalf("cts: %v", err)
	}
}

func TestTransformErrors(t *testing.T) {
	_, err := Transform("let = ;", "/b.js", ESM)
	var te *TransformError
	if !errors.As(err, &te) || te.Line != 1 || te.Column != 6 || te.Source != "let = ;" {
		t.Fatalf("err %#v", err)
	}
	_, err = Transform("const a = 1;\nconst b: = 2;\n", "/b.ts", TSModule)
	if !errors.As(err, &te) || te.Line != 2 || te.Source != "const b: = 2;" {
		t.Fatalf("err %#v", err)
	}
	// A syntax error next to a top-level await is reported as itself.
	_, err = Transform("await 1;\nlet = ;\n", "/c.mjs", ESM)
	if !errors.As(err, &te) || te.Line != 2 {
		t.Fatalf("err %#v", err)
	}
}

// col16 returns the UTF-16 column of byte offset i in its line.
func col16(code string, i int) (line, col int) {
	line = strings.Count(code[:i], "\n")
	start := strings.LastIndexByte(code[:i], '\n') + 1
	return line, len(utf16.Encode([]rune(code[start:i])))
}

// Every MARKn token of the source maps back to line n, at its column.
func TestTransformPositions(t *testing.T) {
	for _, c := range []struct {
		name string
		f    Format
		src  string
	}{
		{"/p.ts", TSCommonJS, "interface A {\n  a: number;\n}\ntype B = string;\nfunction MARK5(a: A): B {\n  throw new Error('x' + MARK6);\n}\nconst é: A = { a: 1 }; MARK8(é);\n"},
		{"/p.mts", TSModule, "MARK1(); import { x } from './x.mjs';\ninterface I { n: number }\nconst v: I = { n: await MARK3(x) };\nconst é = 'é'; for await (const k of MARK4) { await MARK4b(é, await MARK4c); }\nexport function f(): void {\n  throw new MARK6('x');\n}\n"},
		{"/p.mjs", ESM, "const u = await import('./dyn.mjs'); MARK1(u);\nexport default class { m() { return MARK2; } }\n"},
		{"/p.cjs", CommonJS, "const m = import('./x.mjs'); const n = import('./y.mjs'); MARK1(m, n);\nfunction f() { return import(MARK2); }\n"},
	} {
		m, err := Transform(c.src, c.name, c.f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sm, err := ParseSourceMap([]byte(m.Map))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		srcLines := strings.Split(c.src, "\n")
		checked := 0
		for i := 0; ; {
			j := strings.Index(m.Code[i:], "MARK")
			if j < 0 {
				break
			}
			at := i + j
			i = at + 4
			k := at + 4
			for k < len(m.Code) && (m.Code[k] >= '0' && m.Code[k] <= '9' || m.Code[k] >= 'a' && m.Code[k] <= 'z') {
				k++
			}
			tok := m.Code[at:k]
			want := 0
			for n, l := range srcLines {
				if strings.Contains(l, tok+"(") || strings.Contains(l, tok+")") || strings.Contains(l, tok+";") || strings.Contains(l, tok+" ") || strings.HasSuffix(l, tok) {
					want = n + 1
					break
				}
			}
			checked++
			line, col := col16(m.Code, at)
			sl, sc, ok := m.Original(sm, line+1, col+1)
			wantCol := len(utf16.Encode([]rune(srcLines[want-1][:strings.Index(srcLines[want-1], tok)]))) + 1
			if !ok || sl != want || sc != wantCol {
				t.Errorf("%s: %s at %d:%d maps to %d:%d %v, want %d:%d\n%s", c.name, tok, line+1, col+1, sl, sc, ok, want, wantCol, m.Code)
			}
		}
		if checked < strings.Count(c.src, "MARK") {
			t.Errorf("%s: %d of %d marks found in the output", c.name, checked, strings.Count(c.src, "MARK"))
		}
		checkSyntax(t, m)
	}
}

func TestTransformDynamicImportInCommonJS(t *testing.T) {
	m, err := Transform("exports.f = () => import('./x.mjs');\nconst s = 'y'; import(s);\n", "/d.js", CommonJS)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Import || strings.Count(m.Code, ImportName+"(") != 2 || strings.Contains(m.Code, "require(") {
		t.Fatalf("import() not redirected:\n%s", m.Code)
	}
	m, err = Transform("module.exports = 1;\n", "/e.js", CommonJS)
	if err != nil || m.Import {
		t.Fatalf("%v %v", err, m)
	}
}

// FuzzTransform runs hostile source through the transform: a module or a
// typed error, never a panic, and the top-level await rewriting never
// yields code that does not parse.
func FuzzTransform(f *testing.F) {
	f.Add("await 1; export const x = await 2;", true)
	f.Add("for await (const a of b) ; for\nawait (c of d) {}", true)
	f.Add("const s = '~~~~~ ~-~-~ -~-~- ~+~+~'; await s;", false)
	f.Add("$0: for (;;) break $0; for await (x of y) {}", true)
	f.Add("import(x); Promise.resolve().then(() => __toESM(require(y)))", false)
	f.Fuzz(func(t *testing.T, src string, ts bool) {
		if len(src) > 4096 {
			return
		}
		format := ESM
		if ts {
			format = TSModule
		}
		m, err := Transform(src, "/f.mjs", format)
		if err != nil {
			var te *TransformError
			if !errors.As(err, &te) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		checkSyntax(t, m)
		if sm, err := ParseSourceMap([]byte(m.Map)); err == nil {
			m.Original(sm, 1, 1)
		}
	})
}

func TestModuleBinary(t *testing.T) {
	m, err := Transform("const a = await 1; export { a };\n", "/x.mjs", ESM)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back Module
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if back.Code != m.Code || back.Map != m.Map || !back.Async || !back.ESM || len(back.Shifts) != len(m.Shifts) || back.TLALine != 1 {
		t.Fatalf("round trip: %+v", back)
	}
	for i := 0; i < len(b); i++ {
		var x Module
		_ = x.UnmarshalBinary(b[:i]) // truncated: an error, never a panic
	}
}

func TestTransformDefaultName(t *testing.T) {
	for src, want := range map[string]bool{
		"export default function () {}\n":        true,
		"export default class {}\nawait 1;\n":    true,
		"export default function d_default() {}": false,
		"export default function named() {}\n":   false,
		"export default 42;\n":                   true,
	} {
		m, err := Transform(src, "/w/d.mjs", ESM)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(m.Code, `{ value: "default"`); got != want {
			t.Errorf("%q: renamed %v\n%s", src, got, m.Code)
		}
		checkSyntax(t, m)
	}
}
