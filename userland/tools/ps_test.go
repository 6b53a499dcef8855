//go:build !wasip1

package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// psStable are host processes whose every column stays put while the
// test runs: kernel threads (no memory, no CPU time worth a tick, always
// there on Linux).
var psStable = map[int]bool{2: true, 3: true, 4: true}

// TestPsHost runs this ps in-process on the host's /proc and the host's
// procps-ng ps on the same arguments, and compares the header and the
// lines of the kernel threads byte for byte, and pid 1's line with its
// digits hidden (its CPU time and memory may move between the two runs).
func TestPsHost(t *testing.T) {
	t.Setenv("COLUMNS", "")
	t.Setenv("TZ", "UTC")
	for _, line := range []string{
		"ps", "ps -e", "ps -A", "ps -f", "ps -ef", "ps aux", "ps -e --no-headers", "ps ax", "ps -e u",
		"ps -p 1,2,3", "ps -p 1 -p 4", "ps -q 2,3", "ps x", "ps u", "ps -p 2 ax", "ps -fp 2", "ps --pid 2", "ps -e -o pid,ppid,user,comm,args,cmd,stat,tty,time,etime,rss,vsz,%cpu,%mem",
		"ps -e -o args,pid", "ps -e -o comm,user,stat,tty", "ps -e -o pid=,comm=", "ps -e -o pid=,comm", "ps -e -o pid=PROCESS -o comm=",
		"ps -e -o pid:10,comm:4", "ps -e -o pid,tpgid,sid,pgid,ni,nlwp,c,stime,start_time,bsdtime,etimes,times,uid,euid,s,state",
		"ps -e -o cmd -o pid", "ps -e -ostat,tname,tt,ucmd,ucomm,command,pcpu,pmem,vsize,rssize,rsz,euser,uname",
	} {
		checkPs(t, line)
	}
	for _, line := range []string{"ps -o foo", "ps -p abc", "ps -p", "ps --bogus", "ps -o pid,,comm", "ps -o ,", "ps -o pid:0",
		"ps -p 999999", "ps -q"} {
		wout, werr, wcode := hostRun(t, []string{"PATH=/usr/bin:/bin", "TZ=UTC"}, "", line)
		var out, errb bytes.Buffer
		code := dispatch(strings.Fields(line), strings.NewReader(""), &out, &errb)
		if out.String() != wout || errb.String() != werr || code != wcode {
			t.Errorf("%s:\n got %q %q %d\nwant %q %q %d", line, out.String(), errb.String(), code, wout, werr, wcode)
		}
	}
}

func checkPs(t *testing.T, line string) {
	t.Helper()
	wout, werr, wcode := hostRun(t, []string{"PATH=/usr/bin:/bin", "TZ=UTC"}, "", line)
	var out, errb bytes.Buffer
	code := dispatch(strings.Fields(line), strings.NewReader(""), &out, &errb)
	if errb.String() != werr || code != wcode {
		t.Errorf("%s: stderr %q exit %d, want %q %d", line, errb.String(), code, werr, wcode)
	}
	want, got := psLinesByPid(t, line, wout), psLinesByPid(t, line, out.String())
	if want[-1] != got[-1] {
		t.Errorf("%s: header\n got %q\nwant %q", line, got[-1], want[-1])
	}
	digits := regexp.MustCompile(`[0-9]`)
	for pid, w := range want {
		g, ok := got[pid]
		switch {
		case pid == -1:
		case !ok && (psStable[pid] || pid == 1):
			t.Errorf("%s: pid %d missing", line, pid)
		case psStable[pid] && g != w:
			t.Errorf("%s: pid %d\n got %q\nwant %q", line, pid, g, w)
		case pid == 1 && digits.ReplaceAllString(g, "9") != digits.ReplaceAllString(w, "9"):
			t.Errorf("%s: pid 1\n got %q\nwant %q", line, g, w)
		}
	}
}

// psLinesByPid indexes ps output lines by the pid they show (the header
// is -1): the first field that parses as a pid in the PID column's
// position.
func psLinesByPid(t *testing.T, line, out string) map[int]string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	m := map[int]string{}
	hasHeader := !strings.Contains(line, "--no-headers") && !strings.Contains(line, "pid=,comm=") && !strings.Contains(line, "pid=PROCESS -o comm=")
	if hasHeader && len(lines) > 0 {
		m[-1] = lines[0]
		lines = lines[1:]
	}
	for _, l := range lines {
		for _, f := range strings.Fields(l) {
			if n, err := strconv.Atoi(f); err == nil {
				if _, dup := m[n]; !dup && (psStable[n] || n == 1) {
					m[n] = l
				}
				break
			}
		}
	}
	return m
}
