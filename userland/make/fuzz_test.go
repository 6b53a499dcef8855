//go:build !wasip1

package main

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"
)

// noExec is a runner that starts nothing: the fuzzer's makefiles must
// not run the commands they make up.
type noExec struct{}

func (noExec) start([]string, []string, string) (int, error) { return 0, syscall.EPERM }
func (noExec) wait() (int, int, int, error)                  { return 0, 0, 0, syscall.ECHILD }
func (noExec) capture([]string, []string, string) ([]byte, int, error) {
	return nil, 0, syscall.EPERM
}

// FuzzMakefile reads hostile makefiles and updates their goals in
// dry-run mode: make must never panic (only end with a status), and
// a status of 2 must come with a message.
func FuzzMakefile(f *testing.F) {
	for _, c := range diffSeeds() {
		f.Add(c, "")
	}
	f.Add("all: ; @echo $(call f,$(eval x:=1))\nf = $(foreach a,$1,$(a))\n", "all")
	f.Add("X = $(X)\nall: ; $(X)\n", "")
	f.Add("f = $(call f)\n$(f)\n", "")
	f.Add("ifeq ($(a),\nelse\nendif\n", "x")
	f.Add("define X\ndefine Y\nendef\n", "")
	f.Add("%.o: %.c ; cc $<\nall: a.o b.o | c\n", "all")
	f.Add("a:: b\na:: c\nb c: a\n", "a")
	f.Fuzz(func(t *testing.T, text, goals string) {
		if len(text) > 4096 || len(goals) > 100 {
			return
		}
		t.Chdir(t.TempDir())
		var out, errb bytes.Buffer
		args := append([]string{"make", "-n", "-k", "-f", "-"}, strings.Fields(goals)...)
		code := run(args, nil, strings.NewReader(text), &out, &errb, noExec{})
		switch code {
		case 0, 1:
		case 2:
			if errb.Len() == 0 {
				t.Fatalf("exit 2 without a message; stdout %q", out.String())
			}
		default:
			t.Fatalf("exit %d", code)
		}
	})
}

// diffSeeds are the makefiles of the differential cases.
func diffSeeds() []string {
	var out []string
	for _, c := range diffCases {
		if mf, ok := c.files["Makefile"]; ok {
			out = append(out, mf)
		}
	}
	return out
}

// TestNoExecRefuses checks that the fuzzer's runner really starts
// nothing.
func TestNoExecRefuses(t *testing.T) {
	if _, err := (noExec{}).start([]string{"true"}, nil, ""); !errors.Is(err, syscall.EPERM) {
		t.Fatalf("start: %v", err)
	}
}
