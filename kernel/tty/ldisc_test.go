package tty

import (
	"bytes"
	"context"
	"slices"
	"testing"
)

// feed types keys and returns the signals raised.
func feed(t *testing.T, l *LineDiscipline, keys string) []Signal {
	t.Helper()
	n, sigs := l.Input([]byte(keys))
	if n != len(keys) {
		t.Fatalf("Input(%q) took %d bytes", keys, n)
	}
	return sigs
}

func readAll(l *LineDiscipline) (string, bool) {
	buf := make([]byte, 8192)
	n, ok := l.Read(buf)
	return string(buf[:n]), ok
}

func screen(l *LineDiscipline) string {
	buf := make([]byte, l.Pending())
	return string(buf[:l.TakeOutput(buf)])
}

func TestCanonicalLineEditing(t *testing.T) {
	l := NewLineDiscipline(0, 0)
	feed(t, l, "ls -x")
	if l.Readable() {
		t.Fatal("a line without its newline is readable in canonical mode")
	}
	feed(t, l, "\x7f")      // erase "x"
	feed(t, l, "l\x17")     // ^W erases the word "-l"
	feed(t, l, "-a \x7f\r") // CR is NL (ICRNL)
	got, ok := readAll(l)
	if !ok || got != "ls -a\n" {
		t.Fatalf("read %q, %v; want the edited line %q", got, ok, "ls -a\n")
	}
	if want := "ls -x\b \bl\b \b\b \b-a \b \b\r\n"; screen(l) != want {
		t.Fatalf("echo wrong")
	}
	// ^U kills the whole line, multi-byte characters erase whole.
	feed(t, l, "héllo\x15é\x7fok\n")
	if got, _ := readAll(l); got != "ok\n" {
		t.Fatalf("after ^U and UTF-8 erase read %q, want %q", got, "ok\n")
	}
}

func TestCanonicalReadsOneLineAtATime(t *testing.T) {
	l := NewLineDiscipline(0, 0)
	feed(t, l, "one\ntwo\n")
	buf := make([]byte, 2)
	n, _ := l.Read(buf)
	if string(buf[:n]) != "on" {
		t.Fatalf("short read %q", buf[:n])
	}
	for _, want := range []string{"e\n", "two\n"} {
		if got, _ := readAll(l); got != want {
			t.Fatalf("read %q, want %q", got, want)
		}
	}
	if _, ok := readAll(l); ok {
		t.Fatal("read past the input")
	}
}

func TestEOFCharacter(t *testing.T) {
	l := NewLineDiscipline(0, 0)
	feed(t, l, "abc\x04")
	if got, ok := readAll(l); !ok || got != "abc" {
		t.Fatalf("^D after text: read %q, %v; want the text without a newline", got, ok)
	}
	feed(t, l, "\x04")
	if got, ok := readAll(l); !ok || got != "" {
		t.Fatalf("^D on an empty line: read %q, %v; want end of file (0 bytes, ok)", got, ok)
	}
}

func TestSignalCharacters(t *testing.T) {
	l := NewLineDiscipline(0, 0)
	for _, c := range []struct {
		key  string
		sig  Signal
		echo string
	}{{"\x03", SIGINT, "^C"}, {"\x1c", SIGQUIT, "^\\"}, {"\x1a", SIGTSTP, "^Z"}} {
		feed(t, l, "partial")
		screen(l)
		sigs := feed(t, l, c.key)
		if !slices.Equal(sigs, []Signal{c.sig}) {
			t.Fatalf("%q raised %v, want %v", c.key, sigs, c.sig)
		}
		if got := screen(l); got != c.echo {
			t.Fatalf("%q echoed %q, want %q", c.key, got, c.echo)
		}
		feed(t, l, "\n")
		if got, _ := readAll(l); got != "\n" {
			t.Fatalf("the signal did not flush the line: read %q", got)
		}
	}
	// Without ISIG they are plain characters.
	tm := l.Termios()
	tm.Lflag &^= ISIG
	l.SetTermios(tm)
	if sigs := feed(t, l, "\x03\n"); len(sigs) != 0 {
		t.Fatalf("^C raised %v with ISIG off", sigs)
	}
	if got, _ := readAll(l); got != "\x03\n" {
		t.Fatalf("read %q, want the ^C byte", got)
	}
}

func TestRawMode(t *testing.T) {
	l := NewLineDiscipline(0, 0)
	tm := l.Termios()
	tm.MakeRaw()
	l.SetTermios(tm)
	keys := "a\x03\r\x7f\x04\x1b[A"
	if sigs := feed(t, l, keys); len(sigs) != 0 {
		t.Fatalf("raw mode raised %v", sigs)
	}
	if got, _ := readAll(l); got != keys {
		t.Fatalf("raw read %q, want the keys unchanged %q", got, keys)
	}
	if got := screen(l); got != "" {
		t.Fatalf("raw mode echoed %q", got)
	}
	// Output is not post-processed either.
	l.Output([]byte("x\n"))
	if got := screen(l); got != "x\n" {
		t.Fatalf("raw output %q", got)
	}
}

func TestLeavingCanonicalModeReleasesTheLine(t *testing.T) {
	l := NewLineDiscipline(0, 0)
	feed(t, l, "half")
	tm := l.Termios()
	tm.MakeRaw()
	l.SetTermios(tm)
	if got, _ := readAll(l); got != "half" {
		t.Fatalf("read %q after switching to raw, want the edited text", got)
	}
}

func TestOutputCRLFAndEchoControl(t *testing.T) {
	l := NewLineDiscipline(0, 0)
	l.Output([]byte("a\nb\n"))
	if got := screen(l); got != "a\r\nb\r\n" {
		t.Fatalf("output %q, want CR-LF line ends", got)
	}
	feed(t, l, "\x01\t")
	if got := screen(l); got != "^A\t" {
		t.Fatalf("echo of control characters %q, want %q", got, "^A\t")
	}
	tm := l.Termios()
	tm.Lflag &^= ECHO
	l.SetTermios(tm)
	feed(t, l, "secret\n")
	if got := screen(l); got != "" {
		t.Fatalf("echo off still echoed %q", got)
	}
}

func TestBounds(t *testing.T) {
	l := NewLineDiscipline(16, 32)
	// Canonical: a line stops growing at the bound, but its newline
	// still ends it.
	feed(t, l, string(bytes.Repeat([]byte("x"), 100))+"\n")
	got, _ := readAll(l)
	if len(got) != 16 || got[15] != '\n' {
		t.Fatalf("over-long line read as %d bytes %q", len(got), got)
	}
	// Raw: input beyond the bound is not taken (the writer waits).
	tm := l.Termios()
	tm.MakeRaw()
	l.SetTermios(tm)
	n, _ := l.Input(bytes.Repeat([]byte("y"), 100))
	if n != 16 || l.InputRoom() {
		t.Fatalf("raw input took %d bytes (room %v), want 16 and a full buffer", n, l.InputRoom())
	}
	// Output beyond its bound is not taken either.
	screen(l)
	if n := l.Output(bytes.Repeat([]byte("z"), 100)); n != 32 || l.OutputRoom() {
		t.Fatalf("output took %d bytes, want 32", n)
	}
}

func TestWinsize(t *testing.T) {
	l := NewLineDiscipline(0, 0)
	if !l.SetWinsize(Winsize{Rows: 24, Cols: 80}) || l.SetWinsize(Winsize{Rows: 24, Cols: 80}) {
		t.Fatal("SetWinsize must report a change exactly when the size changes")
	}
	if l.Winsize() != (Winsize{24, 80}) {
		t.Fatalf("size %+v", l.Winsize())
	}
}

// FuzzLineDiscipline types arbitrary keys in both modes, interleaved with
// reads and output, and checks the bounds and that raw mode passes the
// bytes through unchanged.
func FuzzLineDiscipline(f *testing.F) {
	f.Add([]byte("ls -la\r"), false)
	f.Add([]byte("a\x7f\x7f\x7f\x15\x17\x04\x03\x1a\x1c\n"), false)
	f.Add([]byte("h\xc3\xa9\x7f\xff\xfe\n"), true)
	f.Fuzz(func(t *testing.T, keys []byte, raw bool) {
		l := NewLineDiscipline(64, 128)
		if raw {
			tm := l.Termios()
			tm.MakeRaw()
			tm.Lflag &^= ISIG
			l.SetTermios(tm)
		}
		var read []byte
		buf := make([]byte, 7)
		for i := 0; i < len(keys); {
			n, _ := l.Input(keys[i:min(i+5, len(keys))])
			i += n
			if l.inLen > l.inMax || len(l.edit) > l.inMax || len(l.out) > l.outMax {
				t.Fatalf("bounds broken: in %d edit %d out %d", l.inLen, len(l.edit), len(l.out))
			}
			for {
				m, ok := l.Read(buf)
				if !ok || m == 0 {
					break
				}
				read = append(read, buf[:m]...)
			}
			l.TakeOutput(buf)
			l.Output(keys[:min(len(keys), 3)])
		}
		if raw && !bytes.Equal(read, keys) {
			t.Fatalf("raw mode read %q, typed %q", read, keys)
		}
		total := 0
		for _, c := range l.chunks {
			total += len(c)
		}
		if total != l.inLen {
			t.Fatalf("inLen %d, chunks hold %d", l.inLen, total)
		}
	})
}

// BenchmarkKeystrokeRoundTrip is one key through a raw terminal and its
// echo back: master write, slave read, slave write, master read.
func BenchmarkKeystrokeRoundTrip(b *testing.B) {
	t := New(Config{Size: Winsize{Rows: 24, Cols: 80}})
	t.SetRaw(true)
	ctx := context.Background()
	key, buf := []byte("k"), make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = t.MasterWrite(ctx, key)
		n, _ := t.SlaveRead(ctx, buf)
		_, _ = t.SlaveWrite(ctx, buf[:n])
		_, _ = t.MasterRead(ctx, buf)
	}
}

// BenchmarkOutputThroughput is program output through the line
// discipline (CR-LF mapping) to the master, 4 KiB at a time.
func BenchmarkOutputThroughput(b *testing.B) {
	t := New(Config{})
	ctx := context.Background()
	chunk := bytes.Repeat([]byte("0123456789abcde\n"), 256)
	buf := make([]byte, 8192)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = t.SlaveWrite(ctx, chunk)
		for t.ld.Pending() > 0 {
			_, _ = t.MasterRead(ctx, buf)
		}
	}
}

// TestKillEcho checks KILL's echo as Linux's n_tty gives it: the line
// rubbed out with ECHOK, ECHOKE and ECHOE (the default, as after `stty
// sane`); the KILL character and a newline with ECHOK alone (`stty
// -echoke`); the character only without ECHOK.
func TestKillEcho(t *testing.T) {
	for _, c := range []struct {
		clear uint32
		want  string
	}{
		{0, "ab\b \b\b \b"},
		{ECHOKE, "ab^U\r\n"},
		{ECHOK, "ab^U"},
	} {
		l := NewLineDiscipline(0, 0)
		tm := DefaultTermios()
		tm.Lflag &^= c.clear
		l.SetTermios(tm)
		feed(t, l, "ab\x15")
		if got := screen(l); got != c.want {
			t.Errorf("without %#o: echo %q, want %q", c.clear, got, c.want)
		}
	}
}
