//go:build !wasip1

package main

import (
	"context"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
)

// ptyRun runs a shell script in the VM on a new pseudo-terminal of the
// given size and returns what the terminal showed, with the line
// discipline's CR-LF turned back into LF.
func ptyRun(t *testing.T, h *vmhost.Host, script string, rows, cols uint16, env ...string) (string, int) {
	t.Helper()
	out, code := ptyRunRaw(t, h, script, rows, cols, env...)
	return strings.ReplaceAll(out, "\r\n", "\n"), code
}

// ptyRunRaw is ptyRun with the bytes as the terminal's master read them.
func ptyRunRaw(t *testing.T, h *vmhost.Host, script string, rows, cols uint16, env ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := h.Spawn(ctx, vmhost.SpawnSpec{Argv: []string{"sh", "-c", script},
		Env: append(append([]string(nil), vmtest.Env...), env...), PTY: &vmhost.PTYSize{Rows: rows, Cols: cols}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(p.Stdout())
	st, err := p.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), st.Code
}

// psRows splits ps output into its header's column names and its rows'
// fields (the last column, args, keeps its spaces).
func psRows(out string, cols int) (header []string, rows [][]string) {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	header = strings.Fields(lines[0])
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) > cols {
			f = append(f[:cols-1], strings.Join(f[cols-1:], " "))
		}
		rows = append(rows, f)
	}
	return header, rows
}

// TestPsVM checks ps against the VM's process table: a sleep the shell
// started in the background is listed with the shell as its parent and
// its arguments, ps lists itself, users get their names, -p selects, and
// the headers are the host procps-ng ps's for the same options.
func TestPsVM(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	const marker = "=====\n"
	opts := []string{"", "-e", "-f", "-ef", "aux", "-e -o pid,ppid,user,comm,args,cmd,stat,tty,time,etime,rss,vsz,%cpu,%mem", "-o pid=X,comm= -e"}
	script := "sleep 30 & echo $$; ps -e -o pid,ppid,user,stat,args"
	for _, o := range opts {
		script += "; printf '" + marker + "'; ps " + o
	}
	script += "; printf '" + marker + "'; ps -p 99999; echo rc=$?; ps --no-headers -p 1"
	r := vmtest.Run(t, h, "", []string{"TZ=UTC"}, "sh", "-c", script)
	if r.Exit.Code != 0 || r.Stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.Exit.Code, r.Stderr)
	}
	parts := strings.Split(r.Stdout, marker)
	shPID, rest, _ := strings.Cut(parts[0], "\n")
	header, rows := psRows(rest, 5)
	if strings.Join(header, " ") != "PID PPID USER STAT COMMAND" {
		t.Fatalf("header %q", header)
	}
	var sleepFound, psFound bool
	for _, row := range rows {
		switch row[4] {
		case "sleep 30":
			sleepFound = true
			if row[1] != shPID || row[2] != "user" || row[3] != "S" {
				t.Errorf("sleep row %q: want ppid %s (the shell), user, S", row, shPID)
			}
		case "ps -e -o pid,ppid,user,stat,args":
			psFound = true
			if row[1] != shPID {
				t.Errorf("ps row %q: want ppid %s", row, shPID)
			}
		}
	}
	if !sleepFound || !psFound {
		t.Errorf("the sleep or ps itself is missing:\n%s", rest)
	}
	// Each header is the host's for the same options.
	for i, o := range opts {
		got, _, _ := strings.Cut(parts[i+1], "\n")
		want, _, _ := strings.Cut(hostPs(t, o), "\n")
		if o == "-o pid=X,comm= -e" {
			want = "    X "
		}
		if got != want {
			t.Errorf("ps %s: header %q, want the host's %q", o, got, want)
		}
	}
	if last := parts[len(parts)-1]; last != "  PID TTY          TIME CMD\nrc=1\n    1 ?        00:00:00 init\n" {
		t.Errorf("ps -p 99999 / ps --no-headers -p 1: %q", last)
	}
}

func hostPs(t *testing.T, opts string) string {
	t.Helper()
	out, _, _ := hostRun(t, []string{"PATH=/usr/bin:/bin"}, "", "ps "+opts)
	return out
}

// TestPsVMTerminal runs ps on a VM pseudo-terminal: the session's
// processes show the terminal (pts/0) and the foreground group's '+'.
func TestPsVMTerminal(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	out, code := ptyRun(t, h, "ps -o pid,tty,stat,tpgid,comm; ps", 24, 80)
	if code != 0 {
		t.Fatalf("exit %d: %q", code, out)
	}
	header, rows := psRows(out, 5)
	if strings.Join(header, " ") != "PID TT STAT TPGID COMMAND" || len(rows) < 2 {
		t.Fatalf("ps on a terminal:\n%s", out)
	}
	for _, row := range rows[:2] {
		if row[1] != "pts/0" {
			t.Errorf("row %q: want the terminal pts/0", row)
		}
		tpgid, _ := strconv.Atoi(row[3])
		if tpgid <= 0 {
			t.Errorf("row %q: want the foreground group", row)
		}
	}
	if rows[0][4] != "sh" || !strings.HasPrefix(rows[0][2], "S") || !strings.Contains(rows[0][2], "s") {
		t.Errorf("the shell's row %q: want a session leader (s)", rows[0])
	}
	if rows[1][4] != "ps" || !strings.HasSuffix(rows[1][2], "+") {
		t.Errorf("ps's row %q: want the foreground group (+)", rows[1])
	}
	if !strings.Contains(out, "  PID TTY          TIME CMD\n") || !strings.Contains(out, "pts/0    00:00:00 ps\n") {
		t.Errorf("default ps on the terminal:\n%s", out)
	}
}

// TestPsVMSelect checks the selection lists on the VM's process table:
// the shell's children by --ppid, a command by -C, the user by -u.
func TestPsVMSelect(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	r := vmtest.Run(t, h, "", nil, "sh", "-c", "sleep 30 & echo $$; ps --ppid $$ -o args=; echo @@; ps -C sleep -o comm=; echo @@; ps -u user -o user= | sort -u; ps -u root -o comm=")
	sh, rest, _ := strings.Cut(r.Stdout, "\n")
	children, rest, _ := strings.Cut(rest, "@@\n")
	lines := strings.Split(strings.TrimSuffix(children, "\n"), "\n")
	slices.Sort(lines)
	if want := []string{"ps --ppid " + sh + " -o args=", "sleep 30"}; !slices.Equal(lines, want) || r.Exit.Code != 0 {
		t.Errorf("ps --ppid: %q (exit %d, %q), want %q", lines, r.Exit.Code, r.Stderr, want)
	}
	if want := "sleep\n@@\nuser\ninit\n"; rest != want {
		t.Errorf("ps -C, -u: %q, want %q", rest, want)
	}
}
