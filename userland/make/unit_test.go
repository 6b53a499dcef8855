//go:build !wasip1

package main

import (
	"bytes"
	"slices"
	"testing"
)

// newTestMake is a Make with an empty database that runs no commands.
func newTestMake(t *testing.T) (*Make, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var out, errb bytes.Buffer
	m := newMake(&options{jobs: 1}, "make", "make", 0, "/work", nil, &out, &errb, noExec{})
	return m, &out, &errb
}

// evalOK reads makefile text and fails the test on a fatal error.
func evalOK(t *testing.T, m *Make, text string) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("fatal reading %q: %v", text, r)
		}
	}()
	m.eval("Makefile", text, m.global)
}

func TestExpand(t *testing.T) {
	m, _, _ := newTestMake(t)
	evalOK(t, m, "L = a.c b.o  c.c\nR = $(L)\nS := $(R:.c=.x)\ncomma := ,\nf = <$1|$2>\n")
	for _, c := range []struct{ in, want string }{
		{"$(L)", "a.c b.o  c.c"},
		{"$(S)", "a.x b.o c.x"},
		{"$(patsubst %.c,%.o,$(L))", "a.o b.o c.o"},
		{"$(words $(L)) $(word 3,$(L))", "3 c.c"},
		{"$(call f,x,y)$(call f,z)", "<x|y><z|>"},
		{"$(foreach w,1 2,[$(w)])", "[1] [2]"},
		{"$(if $(filter b.o,$(L)),yes,no)", "yes"},
		{"$(subst $(comma), ,a,b)", "a b"},
		{"$$x $", "$x "},
		{"${L:%.c=%}", "a b.o c"},
		{"$(origin L) $(origin nope) $(flavor S)", "file undefined simple"},
		{"$(join a b,1 2 3)", "a1 b2 3"},
		{"$(dir a/b c) $(notdir a/b c)", "a/ ./ b c"},
	} {
		if got := m.expand(c.in, m.global); got != c.want {
			t.Errorf("expand(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseAssignment(t *testing.T) {
	for _, c := range []struct {
		line, name, op, value string
		ok                    bool
	}{
		{"X = 1", "X", "=", "1", true},
		{"X:=a b ", "X", ":=", "a b ", true},
		{"X ::= y", "X", "::=", "y", true},
		{"X += y", "X", "+=", "y", true},
		{"X ?= y", "X", "?=", "y", true},
		{"X != echo", "X", "!=", "echo", true},
		{"$(a:b=c) = v", "$(a:b=c)", "=", "v", true},
		{"a b = c", "", "", "", false},
		{"a: b", "", "", "", false},
		{"a: b = c", "", "", "", false},
	} {
		a, ok := parseAssignment(c.line)
		if ok != c.ok || ok && (a.name != c.name || a.op != c.op || a.value != c.value) {
			t.Errorf("parseAssignment(%q) = %+v, %v", c.line, a, ok)
		}
	}
	a, ok := parseAssignment("override export define NAME :=")
	if !ok || !a.define || !a.override || a.export != 1 || a.name != "NAME" || a.op != ":=" {
		t.Errorf("define: %+v %v", a, ok)
	}
}

func TestCondArgs(t *testing.T) {
	for _, c := range []struct{ in, a, b string }{
		{"(a,b)", "a", "b"},
		{"(a ,  b )", "a", "b "},
		{"( a,$(x,y))", " a", "$(x,y)"},
		{`"a" 'b'`, "a", "b"},
	} {
		a, b, _, ok := condArgs(c.in)
		if !ok || a != c.a || b != c.b {
			t.Errorf("condArgs(%q) = %q %q %v", c.in, a, b, ok)
		}
	}
	if _, _, extra, ok := condArgs("(a,b) x"); !ok || !extra {
		t.Errorf("condArgs with extra text: %v %v", extra, ok)
	}
	for _, bad := range []string{"", "(a)", `"a"`, "a b"} {
		if _, _, _, ok := condArgs(bad); ok {
			t.Errorf("condArgs(%q) accepted", bad)
		}
	}
}

func TestCollapseAndComments(t *testing.T) {
	if got := collapseMode("a   \\\n   b\\\n\\\nc", false); got != "a b c" {
		t.Errorf("collapse = %q", got)
	}
	if got := stripComment(`x $(a#b) \# y # z`); got != "x $(a#b) # y " {
		t.Errorf("stripComment = %q", got)
	}
}

func TestDirectArgv(t *testing.T) {
	if argv, ok := directArgv("echo  a\tb"); !ok || !slices.Equal(argv, []string{"echo", "a", "b"}) {
		t.Errorf("plain: %q %v", argv, ok)
	}
	for _, s := range []string{"echo $HOME", "a | b", "cd x", "X=1 cmd", "echo 'q'", "if true"} {
		if _, ok := directArgv(s); ok {
			t.Errorf("%q should go to the shell", s)
		}
	}
}

func TestRulesDatabase(t *testing.T) {
	m, _, _ := newTestMake(t)
	evalOK(t, m, "all: a b | c\n\t@echo $@\nx y &: z\n\ttouch x y\n%.o: %.c\n\tcc $<\nobjs = p.o\n$(objs): %.o: %.s\n")
	all := m.files["all"]
	if !slices.Equal(all.Deps, []string{"a", "b"}) || !slices.Equal(all.OrderOnly, []string{"c"}) || len(all.Recipe) != 1 {
		t.Errorf("all: %+v", all)
	}
	if g := m.files["x"].group; !slices.Equal(g, []string{"x", "y"}) {
		t.Errorf("group %q", g)
	}
	if len(m.patterns) != 1 || m.patterns[0].targets[0] != "%.o" {
		t.Errorf("patterns %+v", m.patterns)
	}
	if p := m.files["p.o"]; p == nil || !slices.Equal(p.Deps, []string{"p.s"}) || p.Stem != "p" {
		t.Errorf("static: %+v", p)
	}
	if m.defaultGoal() != "all" {
		t.Errorf("default goal %q", m.defaultGoal())
	}
}

// TestFatalMessages checks that parse errors end with GNU's wording.
func TestFatalMessages(t *testing.T) {
	for text, want := range map[string]string{
		"ifeq (a,b)\n":          "Makefile:2: *** missing 'endif'.  Stop.\n",
		"x\n":                   "Makefile:1: *** missing separator.  Stop.\n",
		"define X\n":            "Makefile:1: *** missing 'endef', unterminated 'define'.  Stop.\n",
		"$(error a,b)\n":        "Makefile:1: *** a,b.  Stop.\n",
		"X = $(X)\nY := $(X)\n": "Makefile:1: *** Recursive variable 'X' references itself (eventually).  Stop.\n",
	} {
		m, _, errb := newTestMake(t)
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%q: no fatal error", text)
				} else if _, ok := r.(fatal); !ok {
					panic(r)
				}
			}()
			m.eval("Makefile", text, m.global)
		}()
		if errb.String() != want {
			t.Errorf("%q: stderr %q, want %q", text, errb.String(), want)
		}
	}
}
