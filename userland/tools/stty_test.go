//go:build !wasip1

package main

import (
	"bytes"
	"strings"
	"testing"
)

// sttyOffTerminal are command lines whose result does not depend on a
// terminal: errors found before stty looks at its input, and the error
// for an input that is not a terminal.
var sttyOffTerminal = []string{
	"stty", "stty -a", "stty -g", "stty size", "stty raw", "stty -echo", "stty rows 5 cols 10", "stty sane",
	"stty foo", "stty -a foo", "stty rows", "stty -ag", "stty -a -g", "stty rows x", "stty -foo", "stty 1:2:3:4",
	"stty intr", "stty --all", "stty --save", "stty -drain", "stty min 300", "stty -ixoff -",
	"stty 500:5:bf:8a3b:3:1c:7f:15:4:0:1:0:11:13:1a:0:12:f:17:16:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0", "stty cols 0x10 rows 010", "stty ispeed",
	"stty -sane", "stty line 1", "stty 9600 -cbreak speed",
	"stty -F /dev/null", "stty -F /nonexistent -a", "stty -F", "stty -F /dev/null -F /dev/null", "stty --file=/dev/null -g",
	"stty -F/dev/null size", "stty --file /dev/null raw", "stty -F /tmp",
}

// TestSttyHost compares this stty, in-process (no terminal), with the
// host's GNU stty reading /dev/null, in a UTF-8 and in the C locale.
func TestSttyHost(t *testing.T) {
	for _, lang := range []string{"C.UTF-8", "C"} {
		t.Setenv("LC_ALL", lang)
		t.Setenv("LANG", lang)
		t.Setenv("COLUMNS", "")
		for _, line := range sttyOffTerminal {
			wout, werr, wcode := hostRun(t, []string{"PATH=/usr/bin:/bin", "LC_ALL=" + lang}, "", line)
			var out, errb bytes.Buffer
			code := dispatch(strings.Fields(line), strings.NewReader(""), &out, &errb)
			if out.String() != wout || errb.String() != werr || code != wcode {
				t.Errorf("%s %s:\n got %q %q %d\nwant %q %q %d", lang, line, out.String(), errb.String(), code, wout, werr, wcode)
			}
		}
	}
}
