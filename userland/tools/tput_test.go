//go:build !wasip1

package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// tputCases are command lines run by both the host's ncurses programs and
// this tput and clear, for every built-in terminal.
var tputCases = []string{
	"tput clear", "tput cols", "tput lines", "tput colors", "tput bold", "tput sgr0",
	"tput setaf 1", "tput setaf 7", "tput setaf 100", "tput setab 3", "tput setab 200",
	"tput cup 5 10", "tput cup 0 0", "tput cup 1", "tput el", "tput ed", "tput smso", "tput rmso",
	"tput smul", "tput rmul", "tput rev", "tput civis", "tput cnorm", "tput longname",
	"tput setaf", "tput setaf x", "tput bold extra", "tput setaf 1 2", "tput bold sgr0 setaf 2 cup 3 4",
	"tput am", "tput bce", "tput xx", "tput md", "tput E3", "tput pairs", "tput it", "tput smcup", "tput rmcup",
	"tput kcuu1", "tput acsc", "tput sgr 1 0 0 0 0 0 0 0 0", "tput csr 2 20", "tput hpa 7", "tput bel",
	"tput -x clear", "tput", "tput -z", "tput -T", "tput cup 0x10 010", "tput setaf -1", "tput ht", "tput sc rc",
	"tput sgr 0 1 0 1 0 1 0 0 0", "tput sgr 1 1 1 1 1 1 1 1 1", "tput rep 65 3", "tput ech 5", "tput cuf 3",
	"tput Ss 2", "tput Cs red", "tput setaf 255", "tput setab 9", "tput initc 1 500 0 1000",
	"clear", "clear -x", "clear extra", "clear -z", "tput -V", "clear -V", "tput init", "tput reset", "tput -S init",
}

// tputOtherTerms exercise the terminals of the host's terminfo that the
// built-in table lacks (termcap-style strings, %c arithmetic).
var tputOtherTerms = []string{
	"tput -T vt52 cup 5 10", "tput -T ansi cup 3 4", "tput -T ansi sgr 1 1 1 1 1 1 1 1 1", "tput -T sun cup 2 2",
	"tput -T rxvt-unicode setaf 12", "tput -T cygwin sgr 1 0 1 0 1 0 1 0 1", "tput -T mach-color setab 6",
	"tput -T Eterm-color cup 9 9", "clear -T vt52", "clear -T ansi -x",
}

// hostRun runs a command line with the host's programs.
func hostRun(t *testing.T, env []string, stdin, line string) (string, string, int) {
	t.Helper()
	f := strings.Fields(line)
	cmd := exec.Command(f[0], f[1:]...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestTputHost compares this tput and clear, run in-process (no
// terminal), with the host's on the same arguments and environment.
func TestTputHost(t *testing.T) {
	for _, term := range append(builtinNames, "screen-256color", "tmux-256color", "nosuch", "") {
		for _, line := range append(tputCases, tputOtherTerms...) {
			env := []string{"TERM=" + term}
			t.Setenv("TERM", term)
			t.Setenv("LINES", "")
			t.Setenv("COLUMNS", "")
			checkTput(t, env, "", line)
		}
	}
	t.Setenv("TERM", "xterm")
	for _, env := range [][]string{{"LINES=50", "COLUMNS=20"}, {"LINES=x", "COLUMNS=0"}} {
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
		checkTput(t, append([]string{"TERM=xterm"}, env...), "", "tput lines cols")
		checkTput(t, append([]string{"TERM=xterm"}, env...), "", "tput -T vt100 lines cols")
	}
	t.Setenv("TERM", "vt100")
	for _, in := range []string{"bold\nsetaf 2\ncup 1 2\n\nsgr0\n", "bold\nsmul\ncivis\ncnorm\n", "bold\nfoo\nsgr0\n", "  setab   4  \nlongname\n"} {
		checkTput(t, []string{"TERM=vt100"}, in, "tput -S")
		checkTput(t, []string{"TERM=vt100"}, in, "tput -T xterm -S")
	}
}

func checkTput(t *testing.T, env []string, stdin, line string) {
	t.Helper()
	wout, werr, wcode := hostRun(t, env, stdin, line)
	var out, errb bytes.Buffer
	code := dispatch(strings.Fields(line), strings.NewReader(stdin), &out, &errb)
	if out.String() != wout || errb.String() != werr || code != wcode {
		t.Errorf("%v %s:\n got %q %q %d\nwant %q %q %d", env, line, out.String(), errb.String(), code, wout, werr, wcode)
	}
}
