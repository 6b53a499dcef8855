package js

import (
	"strings"
	"testing"
)

// import() works in -e, -p and stdin code (CommonJS at global scope), as
// in Node, and positions in such code stay the source's.
func TestEvalDynamicImport(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/m.mjs", "export const x = 41; export default 'def'")
	cases := []struct {
		argv  []string
		stdin string
		want  string
	}{
		{[]string{"node", "-e", "import('fs').then(fs => console.log(typeof fs.readFileSync))"}, "", "function\n"},
		{[]string{"node", "-e", "var g = 1; import('./m.mjs').then(m => console.log(m.x + g, m.default))"}, "", "42 def\n"},
		{[]string{"node", "-e", "(async () => { const { x } = await import('./m.mjs'); console.log(x) })()"}, "", "41\n"},
		{[]string{"node", "-p", "typeof import('./m.mjs').then"}, "", "function\n"},
		{[]string{"node", "-"}, "import('./m.mjs').then(m => console.log('stdin', m.x))", "stdin 41\n"},
		{[]string{"node", "-e", "console.log('no import( in a string is fine')"}, "", "no import( in a string is fine\n"},
		{[]string{"node", "-e", "var top = 1; import('path'); console.log(globalThis.top)"}, "", "1\n"},
	}
	for _, c := range cases {
		r := v.run(c.stdin, c.argv...)
		if r.code != 0 || r.stdout != c.want {
			t.Errorf("%q: exit %d stdout %q want %q\nstderr %s", c.argv, r.code, r.stdout, c.want, trunc(r.stderr))
		}
	}
	r := v.node("\n\nimport('path').then(() => { throw new Error('at line 3') })")
	if r.code != 1 || !strings.Contains(r.stderr, "[eval]:3:") {
		t.Errorf("position: exit %d stderr %s", r.code, r.stderr)
	}
	r = v.node("import('./missing.mjs').catch(e => console.log(e.code))")
	if r.stdout != "ERR_MODULE_NOT_FOUND\n" {
		t.Errorf("missing module: %+v", r)
	}
}
