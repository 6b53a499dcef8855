//go:build !wasip1

package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
)

// TestTputVM runs tput and clear in a VM, which has no terminfo files
// (the built-in table answers), and the host's ncurses programs on the
// same command lines, for each built-in terminal; then a terminal the
// table lacks, found through $TERMINFO in a directory holding the host's
// compiled entry.
func TestTputVM(t *testing.T) {
	var cases []diffCase
	for _, term := range append(builtinNames, "nosuch") {
		var script strings.Builder
		for _, line := range tputCases {
			// Each line's output, status and messages, in one shell run
			// per terminal to keep the test quick.
			script.WriteString("TERM=" + term + " " + line + " 2>&1; echo \" =$?\"\n")
		}
		cases = append(cases, diffCase{name: "TERM=" + term, script: script.String(), stderr: true})
	}
	cases = append(cases,
		diffCase{script: "printf 'bold\\nsetaf 2\\ncup 1 2\\n\\nsgr0\\n' | tput -T xterm -S; echo \" =$?\"; printf 'bold\\nsmul\\ncivis\\n' | tput -T vt100 -S; echo \" =$?\"", stderr: true},
		diffCase{script: "LINES=50 COLUMNS=20 TERM=xterm tput lines cols; LINES=50 tput -T xterm lines cols", stderr: true},
	)
	entry, err := os.ReadFile("/lib/terminfo/r/rxvt-unicode")
	if err != nil {
		t.Fatalf("host terminfo (ncurses-base): %v", err)
	}
	files := fixture{"ti/r/rxvt-unicode": string(entry)}
	cases = append(cases, diffCase{files: files, script: "export TERMINFO=$PWD/ti; tput -T rxvt-unicode setaf 3; tput -T rxvt-unicode longname; tput -T rxvt-unicode colors; TERM=rxvt-unicode clear", stderr: true})
	runCasesWith(t, []string{"tput", "clear"}, cases)
}

// TestTputVMTerminal runs tput on a VM pseudo-terminal and, through
// script(1), on a host one: init and reset (which need a terminal), the
// screen size tput reads from the terminal, and clear, for each
// built-in terminal; the two terminals' bytes must be identical.
func TestTputVMTerminal(t *testing.T) {
	script := "stty " + linuxPTYMode + " rows 30 cols 100"
	for _, term := range builtinNames {
		// tput writes into a file: while it sends init strings it turns
		// output processing off, which a concurrent od would race with.
		script += "; for c in init reset; do tput -T " + term + " $c > /tmp/o; echo \" =$?\"; od -An -c /tmp/o; stty -g; done" +
			"; stty -echo intr undef; tput -T " + term + " reset; echo; stty -g; stty sane" +
			"; tput -T " + term + " cols lines; TERM=" + term + " tput cols lines; TERM=" + term + " clear | od -An -c"
	}
	h := vmtest.NewHost(t, vmhost.Config{})
	env := []string{"LC_ALL=C.UTF-8", "COLUMNS=", "LINES="}
	got, code := ptyRunRaw(t, h, script, 24, 80, env...)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, got)
	}
	cmd := exec.Command("script", "-qec", "sh -c '"+strings.ReplaceAll(script, "'", `'\''`)+"'", "/dev/null")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	want, err := cmd.Output()
	if err != nil {
		t.Fatalf("host script(1): %v", err)
	}
	if got != string(want) {
		t.Errorf("the terminals differ%s", firstDiff(got, string(want)))
	}
}
