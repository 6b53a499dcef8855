package js

import (
	"testing"
)

// TestESMImportAttributeMessages checks the import attribute errors word
// for word with Node 22's (Node 20 names them ERR_IMPORT_ASSERTION_* with
// other wording; testdata/diff/esm_import_attributes.mjs compares the
// behaviour with the host's node): a JSON import without the attribute,
// an unknown type, and type json on a JavaScript module and a builtin,
// for static imports (the module fails before any of it runs) and
// import() from ES modules and CommonJS.
func TestESMImportAttributeMessages(t *testing.T) {
	v := newVM(t, nil)
	// Node caches a module's failed load by URL, so each case has a file
	// of its own.
	for _, f := range []string{"d", "e", "f", "g", "h", "i"} {
		v.writeFile("/workspace/"+f+".json", `{"a": 1}`)
	}
	v.writeFile("/workspace/m.mjs", "export default 1\n")
	v.writeFile("/workspace/missing.mjs", "console.log('ran');\nimport d from './d.json';\n")
	v.writeFile("/workspace/css.mjs", "import d from './e.json' with { type: 'css' };\n")
	v.writeFile("/workspace/dyn.cjs", "module.exports = import('./g.json');\n")
	v.writeFile("/workspace/main.mjs", mainSrc)
	r := v.run("", "node", "main.mjs")
	want := `TypeError ERR_IMPORT_ATTRIBUTE_MISSING Module "file:///workspace/d.json" needs an import attribute of "type: json"
TypeError ERR_IMPORT_ATTRIBUTE_UNSUPPORTED Import attribute "type" with value "css" is not supported
TypeError ERR_IMPORT_ATTRIBUTE_TYPE_INCOMPATIBLE Module "file:///workspace/m.mjs" is not of type "json"
TypeError ERR_IMPORT_ATTRIBUTE_TYPE_INCOMPATIBLE Module "node:fs" is not of type "json"
TypeError ERR_IMPORT_ATTRIBUTE_UNSUPPORTED Import attribute "type" with value "javascript" is not supported
TypeError ERR_IMPORT_ATTRIBUTE_MISSING Module "file:///workspace/g.json" needs an import attribute of "type: json"
TypeError ERR_IMPORT_ATTRIBUTE_UNSUPPORTED Import attribute "other" with value "x" is not supported
1
`
	if r.code != 0 || r.stdout != want {
		t.Fatalf("code %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}
}

const mainSrc = `
const show = (e) => console.log(e.name, e.code, e.message);
await import('./missing.mjs').catch(show);
await import('./css.mjs').catch(show);
await import('./m.mjs', { with: { type: 'json' } }).catch(show);
await import('node:fs', { with: { type: 'json' } }).catch(show);
await import('./f.json', { with: { type: 'javascript' } }).catch(show);
await (await import('./dyn.cjs')).default.catch(show);
await import('./h.json', { with: { type: 'json', other: 'x' } }).catch(show);
console.log((await import('./i.json', { with: { type: 'json' } })).default.a);
`
