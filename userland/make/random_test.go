//go:build !wasip1

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
)

// genMakefile writes a random makefile from the features both makes
// share: assignments of every flavor, functions, substitution
// references, conditionals, define, export, target-specific variables,
// and rules whose recipes print what they see. The seed fixes it.
type genMakefile struct{ r *rand.Rand }

var (
	genNames = []string{"A", "B", "C", "X", "Y"}
	genWords = []string{"a", "b.c", "d/e.o", "f.h", "%.c", "x y", "", "  "}
	genFuncs = []string{"subst a,b,{v}", "patsubst %.c,%.o,{v}", "strip {v}", "findstring b,{v}",
		"filter %.c %.h,{v}", "filter-out %.o,{v}", "sort {v}", "word 2,{v}", "words {v}", "wordlist 1,2,{v}",
		"firstword {v}", "lastword {v}", "dir {v}", "notdir {v}", "suffix {v}", "basename {v}",
		"addsuffix .x,{v}", "addprefix p/,{v}", "join {v},{v}", "if {v},yes,no", "or {v},z", "and {v},z",
		"foreach w,{v},[$(w)]", "origin {n}", "flavor {n}", "value {n}", "call {n},1,2"}
)

func (g genMakefile) pick(list []string) string { return list[g.r.IntN(len(list))] }

func (g genMakefile) value(depth int) string {
	x := g.r.Float64()
	switch {
	case x < 0.3 || depth > 2:
		return g.pick(genWords)
	case x < 0.55:
		return "$(" + g.pick(genNames) + ")"
	case x < 0.65:
		return "${" + g.pick(genNames) + ":.c=.o}"
	}
	f := strings.ReplaceAll(g.pick(genFuncs), "{v}", g.value(depth+1))
	return "$(" + strings.ReplaceAll(f, "{n}", g.pick(genNames)) + ")"
}

func (g genMakefile) line() string {
	n := g.pick(genNames)
	x := g.r.Float64()
	switch {
	case x < 0.45:
		var vals []string
		for i := g.r.IntN(4); i > 0; i-- {
			vals = append(vals, g.value(0))
		}
		return n + " " + g.pick([]string{"=", ":=", "+=", "?=", "::="}) + " " + strings.Join(vals, " ")
	case x < 0.55:
		return fmt.Sprintf("ifeq (%s,%s)\n%s = in\nelse\n%s = out\nendif", g.value(0), g.value(0), n, n)
	case x < 0.62:
		return fmt.Sprintf("ifdef %s\n%s += def\nendif", n, g.pick(genNames))
	case x < 0.67:
		return fmt.Sprintf("define %s\n%s\n%s\nendef", n, g.value(0), g.value(0))
	case x < 0.7:
		return "undefine " + n
	case x < 0.74:
		return "export " + n
	case x < 0.82:
		return fmt.Sprintf("t%d: %s %s %s", 1+g.r.IntN(3), n, g.pick([]string{"=", ":=", "+="}), g.value(0))
	case x < 0.86:
		return fmt.Sprintf("%%.q: %s = pat-%s", n, g.value(0))
	case x < 0.89:
		return fmt.Sprintf("override %s %s %s", n, g.pick([]string{"=", ":=", "+="}), g.value(0))
	case x < 0.92:
		return fmt.Sprintf("$(eval %s := %s)", n, g.value(0))
	case x < 0.94:
		return fmt.Sprintf("f%s = <$1|$2|%s>", n, g.value(0))
	case x < 0.96:
		return fmt.Sprintf("s1.z s2.z: %%.z: %s\n\t@echo static $@ $* $<", g.pick([]string{"t3", "", "| t2"}))
	case x < 0.98:
		return "d1:: t3\n\t@echo dc1 $@\nd1::\n\t@echo dc2 $^"
	}
	return "$(info " + g.value(0) + ")"
}

func (g genMakefile) makefile() string {
	var b strings.Builder
	for i := 2 + g.r.IntN(7); i > 0; i-- {
		b.WriteString(g.line() + "\n")
	}
	b.WriteString("all: t1 t2 t3 q.q $(if $(filter s1.z,$(MAKEFILE_LIST) $(.DEFAULT_GOAL)),,)\n")
	if g.r.IntN(3) == 0 {
		b.WriteString(".PHONY: t3\n")
	}
	show := `"[$(A)] [$(B)] [$(C)] [$(X)] [$(Y)] $@ $^ $|"`
	for i := 1; i <= 3; i++ {
		var deps []string
		for j := i + 1; j <= 3; j++ {
			if g.r.IntN(3) == 0 {
				deps = append(deps, fmt.Sprintf("t%d", j))
			}
		}
		if g.r.IntN(4) == 0 {
			deps = append(deps, "|", "q.q")
		}
		prefix := g.pick([]string{"@", "@", "", "-@"})
		fmt.Fprintf(&b, "t%d: %s\n\t%secho t%d %s\n", i, strings.Join(deps, " "), prefix, i, show)
		if g.r.IntN(6) == 0 {
			fmt.Fprintf(&b, "\t@exit %d\n", 1+g.r.IntN(3))
		}
	}
	b.WriteString("%.q:\n\t@echo pattern $@ $* " + show + "\n")
	return b.String()
}

// randomCase is the makefile and arguments of one seed.
func randomCase(seed uint64) (string, string) {
	text := genMakefile{rand.New(rand.NewPCG(seed, 0x6d616b65))}.makefile()
	args := []string{"", "-k", "-n", "-s t2 all", "A=cmd 'X=c $(B)' t1", "-i s1.z d1 all"}[seed%6]
	return text, args
}

// TestRandomMakefiles runs generated makefiles (fixed seeds) with GNU
// make and with this make built for the host, with and without -k, and
// compares what they print and how they end.
func TestRandomMakefiles(t *testing.T) {
	checkHostMake(t)
	exe := filepath.Join(t.TempDir(), "make")
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	hostBin, ourBin := binWith(t, hostMake), binWith(t, exe)
	for seed := uint64(1); seed <= 240; seed++ {
		text, args := randomCase(seed)
		wd, gd := t.TempDir(), t.TempDir()
		for _, d := range []string{wd, gd} {
			if err := os.WriteFile(filepath.Join(d, "Makefile"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want := shRun(t, wd, hostBin, "make "+args)
		if want.code > 2 {
			// GNU make crashed (runaway recursion); this make stops with
			// an error instead.
			continue
		}
		got := shRun(t, gd, ourBin, "make "+args)
		if got != want {
			t.Errorf("seed %d, make %s:\n%s\n got: %+v\nwant: %+v", seed, args, text, got, want)
		}
	}
}

// TestRandomMakefilesVM runs the generated makefiles with
// make.wasm in a VM (recipes in the VM's shell) against GNU make. Seeds
// whose recipes are shell syntax errors are left out: the two shells
// word those differently, which is not make's business.
func TestRandomMakefilesVM(t *testing.T) {
	checkHostMake(t)
	want, got := t.TempDir(), t.TempDir()
	h := vmtest.NewHost(t, vmhost.Config{Mounts: []vm.Mount{{Path: "/mnt/host", HostDir: got}}})
	hostBin := binWith(t, hostMake)
	compared := 0
	for seed := uint64(1); seed <= 240; seed++ {
		text, args := randomCase(seed)
		name := fmt.Sprintf("r%d", seed)
		wd, gd := filepath.Join(want, name), filepath.Join(got, name)
		writeFixture(t, wd, map[string]string{"Makefile": text})
		writeFixture(t, gd, map[string]string{"Makefile": text})
		w := shRun(t, wd, hostBin, "make "+args)
		if w.code > 2 || strings.Contains(w.stderr, "/bin/sh:") {
			continue
		}
		compared++
		g := vmRun(t, h, "/mnt/host/"+name, "make "+args)
		if g != w {
			t.Errorf("seed %d, make %s:\n%s\n got: %+v\nwant: %+v", seed, args, text, g, w)
		}
	}
	if compared < 180 {
		t.Errorf("only %d of 240 seeds compared", compared)
	}
	t.Logf("%d seeds compared", compared)
}
