package modules

import (
	"strings"
	"testing"
)

// TestImportAttributesMarked: each import call of the transformed code
// carries its own import's attributes, matched by specifier and order
// (one specifier imported with and without, or with two types), import()
// with a computed specifier calls the import function's "any", and calls
// that are not imports are left alone.
func TestImportAttributesMarked(t *testing.T) {
	src := `import a from './x.json' with { type: 'json' };
import b from './x.json';
import c from './y.js' with { type: 'json', mode: 'x' };
export * from './w.json' with { type: 'json' };
const d = import('./x.json', { with: { type: 'json' } });
const e = import('./x.json');
const f = import('./x.json', { with: { type: 'css' } });
const g = import(spec, { with: { type: 'json' } });
const h = obj.require('./x.json');
const s = "import q from './q.json' with { type: 'json' }";
`
	m, err := Transform(src, "/m.mjs", ESM)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`require("./x.json\x00json"), 1)`, `require("./x.json\x00"), 1)`, `require("./y.js\x00\x01mode\x01x"), 1)`,
		`__reExport(m_exports, require("./w.json\x00json")`,
		`__toESM(require("./x.json\x00json"), 1))`, `__toESM(require("./x.json\x00"), 1))`, `__toESM(require("./x.json\x00css"), 1))`,
		`__toESM(require.any(spec)))`, `obj.require("./x.json")`, `"import q from './q.json' with { type: 'json' }"`,
	} {
		if !strings.Contains(m.Code, want) {
			t.Errorf("no %s in\n%s", want, m.Code)
		}
	}
	// CommonJS: import() is marked, require() is not.
	m, err = Transform("require('./x.json'); import('./x.json', { with: { type: 'json' } }); import(p, { with: { type: 'json' } })", "/m.cjs", CommonJS)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`require("./x.json")`, ImportName + `("./x.json\x00json")`, ImportName + `.any(p)`} {
		if !strings.Contains(m.Code, want) {
			t.Errorf("no %s in\n%s", want, m.Code)
		}
	}
	// Without a clause that could be an attribute nothing is parsed twice
	// or changed: the loader then knows every import has none.
	m, err = Transform("import a from './x.json'; import(p)", "/m.mjs", ESM)
	if err != nil || strings.Contains(m.Code, `\x00`) || strings.Contains(m.Code, ".any(") {
		t.Fatalf("%v\n%s", err, m.Code)
	}
}

// BenchmarkTransformAttributes: the cost of the second parse for a
// module with an import attribute, against the same module without.
func BenchmarkTransformAttributes(b *testing.B) {
	body := "\nexport const f = (x) => x + 1;\nconsole.log(a, f(2));\n"
	for _, c := range []struct{ name, src string }{
		{"without", "import a from './x.js';" + body},
		{"with", "import a from './x.json' with { type: 'json' };" + body},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Transform(c.src, "/m.mjs", ESM); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
