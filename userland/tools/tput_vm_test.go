//go:build !wasip1

package main

import (
	"os"
	"strings"
	"testing"
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
