package shell

import (
	"strings"
	"testing"
)

// FuzzParseBash checks the rewrite-and-reparse workaround and the syntax
// error wording on arbitrary text: no panic, newlines kept where they
// were (line numbers hold), statements only from before the error, and a
// reported line within the text.
func FuzzParseBash(f *testing.F) {
	for _, s := range []string{
		"echo a\nif then\necho b\n",
		"declare -A m=([README.md]=1 [key with space]=2)\necho ${m[key with space]}\n",
		"echo ${x~} ${x~~} ${a b} ${x!!}\n",
		"echo $((1 +* 2)) $(( 3 = 4 ))\n",
		"declare 1abc=2\n",
		"x=$(if then)\n",
		"cat <<EOF\nit's\nEOF\nif true; then\n",
		"echo \"$(echo\n\n",
		"(( 1 + \n",
		"$\"$\"$\"$\"${",
		"cat <<EOF\nabc\n  EOF\necho after\n",
		"x=$(cat <<EOF\nabc\n)\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 1<<12 {
			return
		}
		p := parseBash(src)
		if p.appended > len(p.src) || strings.Count(p.src[:len(p.src)-p.appended], "\n") != strings.Count(src, "\n") {
			t.Fatalf("rewrites moved lines: %q became %q", src, p.src)
		}
		if p.err == nil {
			return
		}
		if p.err.line < 1 || p.err.line > eofLine(src) {
			t.Fatalf("error line %d outside the text %q", p.err.line, src)
		}
		for _, st := range p.stmts {
			if uint(st.End().Line()) >= p.err.line && !strings.Contains(p.err.msg, "end of file") && !strings.Contains(p.err.msg, "looking for") {
				t.Fatalf("statement ending on line %d runs before the error on line %d in %q", st.End().Line(), p.err.line, src)
			}
		}
	})
}

// TestParseBash pins the messages of common mistakes against bash 5.2's.
func TestParseBash(t *testing.T) {
	for _, c := range []struct {
		src, msg string
		line     uint
		ran      int
	}{
		{"echo a\nif then\necho b\n", "syntax error near unexpected token `then'", 2, 1},
		{"echo a; if then\n", "syntax error near unexpected token `then'", 1, 0},
		{"echo a\nfor x in a; echo $x; done\n", "syntax error near unexpected token `echo'", 2, 1},
		{"echo a\necho \"unterm\necho b\n", "unexpected EOF while looking for matching `\"'", 2, 1},
		{"echo a\nx=$(echo\n", "unexpected EOF while looking for matching `)'", 3, 1},
		{"echo a\nwhile true; do\n echo\n", "syntax error: unexpected end of file", 4, 1},
		{"echo ok; (", "syntax error: unexpected end of file", 2, 0},
		{"echo a\necho >\n", "syntax error near unexpected token `newline'", 2, 1},
		{"echo a\nx=$(if then)\n", "syntax error near unexpected token `then'", 2, 1},
		{"f() {\n echo x\n  if\n}\necho b\n", "syntax error near unexpected token `}'", 4, 0},
	} {
		p := parseBash(c.src)
		if p.err == nil || p.err.msg != c.msg || p.err.line != c.line || len(p.stmts) != c.ran {
			t.Errorf("%q: got %+v with %d statements, want %q on line %d after %d", c.src, p.err, len(p.stmts), c.msg, c.line, c.ran)
		}
	}
	for _, src := range []string{
		"declare -A m=([README.md]=1 [\"a b\"]=2)\n",
		"echo ${m[key with space]} ${x~~} ${a b}\n",
		"echo $((1 +* 2))\n",
		"declare 1abc=2\n",
	} {
		if p := parseBash(src); p.err != nil {
			t.Errorf("%q: %s", src, p.err.msg)
		}
	}
}
