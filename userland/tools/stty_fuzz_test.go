package main

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzStty applies arbitrary setting lists to a mode and displays the
// result every way stty can: no input may panic, and a mode printed with
// -g reads back as itself (its line discipline aside). Seeds live in testdata/fuzz/FuzzStty.
func FuzzStty(f *testing.F) {
	f.Add("raw -echo intr ^X min 5 time 2 rows 3 cols 4 9600", uint32(0o2400), uint32(5), uint32(0xbf), uint32(0o105073))
	f.Add("500:5:bf:8a3b:3:1c:7f:15:4:0:1:0:11:13:1a:0:12:f:17:16:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0 sane -cooked nl -nl evenp oddp", uint32(0), uint32(0), uint32(0), uint32(0))
	f.Add("erase ^? kill undef eof 0x10 line 7 -drain drain litout -pass8 lcase tabs -tabs crt dec ek", uint32(1<<31), uint32(1<<31), uint32(1<<31), uint32(1<<31))
	f.Fuzz(func(t *testing.T, args string, i, o, c, l uint32) {
		m := termios{Iflag: i, Oflag: o, Cflag: c, Lflag: l}
		for k := range m.Cc {
			m.Cc[k] = byte(i >> (k % 4 * 8))
		}
		st := &sttyState{out: &bytes.Buffer{}, maxCol: 80}
		var check termios
		_ = st.apply(true, strings.Fields(args), &check)
		_ = st.apply(false, strings.Fields(args), &m)
		for _, w := range []int{1, 80} {
			st.maxCol = w
			_ = st.displayAll(&m)
			st.displayChanged(&m)
		}
		st.out.Reset()
		st.displayRecoverable(&m)
		// -g leaves out the line discipline, as GNU stty's does.
		back := termios{Line: m.Line}
		if !recoverMode(strings.TrimSuffix(st.out.String(), "\n"), &back) || back != m {
			t.Fatalf("-g %q read back as %+v, want %+v", st.out.String(), back, m)
		}
	})
}
