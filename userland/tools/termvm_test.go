//go:build !wasip1

package main

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
)

// vt is the screen of a small VT100/xterm emulator: enough of one
// (cursor addressing, erasing, the alternate screen) to read back what
// less, more and vi draw, as a person at the terminal would see it.
type vt struct {
	rows, cols int
	main, alt  [][]rune
	alternate  bool
	r, c       int
	// saved is the cursor that switching to the alternate screen saves.
	saved [2]int
}

func newVT(rows, cols int) *vt {
	v := &vt{rows: rows, cols: cols}
	v.main, v.alt = v.blank(), v.blank()
	return v
}

func (v *vt) blank() [][]rune {
	s := make([][]rune, v.rows)
	for i := range s {
		s[i] = []rune(strings.Repeat(" ", v.cols))
	}
	return s
}

func (v *vt) screen() [][]rune {
	if v.alternate {
		return v.alt
	}
	return v.main
}

func (v *vt) scroll() {
	s := v.screen()
	copy(s, s[1:])
	s[len(s)-1] = []rune(strings.Repeat(" ", v.cols))
}

// write interprets output bytes.
func (v *vt) write(b string) {
	rs := []rune(b)
	for i := 0; i < len(rs); i++ {
		ch := rs[i]
		switch {
		case ch == 0x1b && i+1 < len(rs) && rs[i+1] == '[':
			j := i + 2
			for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
				j++
			}
			if j >= len(rs) {
				return
			}
			v.csi(string(rs[i+2:j]), rs[j])
			i = j
		case ch == 0x1b:
			i++
		case ch == '\r':
			v.c = 0
		case ch == '\n':
			if v.r++; v.r >= v.rows {
				v.r = v.rows - 1
				v.scroll()
			}
		case ch == '\b':
			v.c = max(0, v.c-1)
		case ch == 7:
		default:
			if v.c >= v.cols {
				v.c = 0
				if v.r++; v.r >= v.rows {
					v.r = v.rows - 1
					v.scroll()
				}
			}
			v.screen()[v.r][v.c] = ch
			v.c++
		}
	}
}

func (v *vt) csi(params string, final rune) {
	priv := strings.HasPrefix(params, "?")
	params = strings.TrimPrefix(params, "?")
	var n []int
	for _, p := range strings.Split(params, ";") {
		x, _ := strconv.Atoi(p)
		n = append(n, x)
	}
	arg := func(i, def int) int {
		if i < len(n) && n[i] != 0 {
			return n[i]
		}
		return def
	}
	s := v.screen()
	switch final {
	case 'H', 'f':
		v.r, v.c = min(arg(0, 1), v.rows)-1, min(arg(1, 1), v.cols)-1
	case 'A':
		v.r = max(0, v.r-arg(0, 1))
	case 'B':
		v.r = min(v.rows-1, v.r+arg(0, 1))
	case 'C':
		v.c = min(v.cols-1, v.c+arg(0, 1))
	case 'D':
		v.c = max(0, v.c-arg(0, 1))
	case 'K':
		from, to := v.c, v.cols
		switch arg(0, 0) {
		case 1:
			from, to = 0, v.c+1
		case 2:
			from = 0
		}
		for i := from; i < min(to, v.cols); i++ {
			s[v.r][i] = ' '
		}
	case 'J':
		if arg(0, 0) == 2 {
			for r := range s {
				s[r] = []rune(strings.Repeat(" ", v.cols))
			}
			return
		}
		for i := v.c; i < v.cols; i++ {
			s[v.r][i] = ' '
		}
		for r := v.r + 1; r < v.rows; r++ {
			s[r] = []rune(strings.Repeat(" ", v.cols))
		}
	case 'h', 'l':
		if priv && arg(0, 0) == 1049 {
			v.alternate = final == 'h'
			if v.alternate {
				v.saved = [2]int{v.r, v.c}
				v.alt = v.blank()
			} else {
				v.r, v.c = v.saved[0], v.saved[1]
			}
		}
	}
}

// text is the screen, each row with trailing blanks cut, trailing empty
// rows dropped.
func (v *vt) text() string {
	var lines []string
	for _, row := range v.screen() {
		lines = append(lines, strings.TrimRight(string(row), " "))
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// termSession is a program on a VM terminal, with the screen it draws.
type termSession struct {
	t    *testing.T
	p    vmhost.Process
	mu   sync.Mutex
	vt   *vt
	raw  strings.Builder
	done chan struct{}
}

// startTerm runs sh -c script on a rows×cols terminal in h, in dir.
func startTerm(t *testing.T, h *vmhost.Host, dir, script string, rows, cols int) *termSession {
	t.Helper()
	env := append(append([]string(nil), vmtest.Env...), "TERM=xterm")
	p, err := h.Spawn(context.Background(), vmhost.SpawnSpec{
		Argv: []string{"sh", "-c", script}, Env: env, Cwd: dir,
		PTY: &vmhost.PTYSize{Rows: uint16(rows), Cols: uint16(cols)},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &termSession{t: t, p: p, vt: newVT(rows, cols), done: make(chan struct{})}
	t.Cleanup(func() { _ = p.Signal(9) })
	go func() {
		defer close(s.done)
		buf := make([]byte, 4096)
		for {
			n, err := p.Stdout().Read(buf)
			s.mu.Lock()
			s.raw.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return s
}

// resize changes the terminal's window size (the program learns it at
// its next redraw).
func (s *termSession) resize(rows, cols int) {
	s.t.Helper()
	if err := s.p.Resize(uint16(rows), uint16(cols)); err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	s.vt = newVT(rows, cols)
	s.mu.Unlock()
}

// screen is what the terminal shows now.
func (s *termSession) screen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := newVT(s.vt.rows, s.vt.cols)
	v.write(s.raw.String())
	return v.text()
}

// waitScreen polls (generously) until ok accepts the screen.
func (s *termSession) waitScreen(what string, ok func(string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		sc := s.screen()
		if ok(sc) {
			return sc
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %s; it shows:\n%s", what, sc)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitText waits until the screen contains want.
func (s *termSession) waitText(want string) string {
	s.t.Helper()
	return s.waitScreen(strconv.Quote(want), func(sc string) bool { return strings.Contains(sc, want) })
}

// waitLast waits until the screen's last non-empty row is want.
func (s *termSession) waitLast(want string) string {
	s.t.Helper()
	return s.waitScreen("a last row "+strconv.Quote(want), func(sc string) bool {
		lines := strings.Split(sc, "\n")
		return strings.TrimRight(lines[len(lines)-1], " ") == want
	})
}

func (s *termSession) keys(k string) {
	s.t.Helper()
	if _, err := s.p.Stdin().Write([]byte(k)); err != nil {
		s.t.Fatalf("typing %q: %v", k, err)
	}
}

// wait waits for the program to exit and returns its status.
func (s *termSession) wait() int {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := s.p.Wait(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	return st.Code
}

// termHost is a VM with dir mounted at /mnt/host.
func termHost(t *testing.T, dir string) *vmhost.Host {
	return vmtest.NewHost(t, vmhost.Config{Mounts: []vm.Mount{{Path: "/mnt/host", HostDir: dir}}})
}
