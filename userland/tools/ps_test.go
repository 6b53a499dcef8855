//go:build !wasip1

package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPsHost runs this ps in-process on the host's /proc between two
// runs of the host's procps-ng ps on the same arguments, and compares the
// header and every process line that the two host runs printed alike
// (a process whose CPU time, memory or state moved is left out; those
// that did not move cannot have looked different to this ps).
func TestPsHost(t *testing.T) {
	t.Setenv("COLUMNS", "")
	for _, line := range []string{
		"ps", "ps -e", "ps -A", "ps -f", "ps -ef", "ps aux", "ps -e --no-headers", "ps ax", "ps -e u",
		"ps -p 1,2,3", "ps -p 1 -p 4", "ps -q 2,3", "ps x", "ps u", "ps -p 2 ax", "ps -fp 2", "ps --pid 2",
		"ps -e -o pid,ppid,user,comm,args,cmd,stat,tty,time,etime,rss,vsz,%cpu,%mem",
		"ps -e -o args,pid", "ps -e -o pid,comm,user,stat,tty", "ps -e -o pid=,comm=", "ps -e -o pid=,comm", "ps -e -o pid=PROCESS -o comm=",
		"ps -e -o pid:10,comm:4", "ps -e -o pid,tpgid,sid,pgid,ni,nlwp,c,stime,start_time,bsdtime,etimes,times,uid,euid,s,state",
		"ps -e -o cmd -o pid", "ps -C kthreadd,ksoftirqd/0 -o pid,comm", "ps -u root -o pid,comm", "ps -U 0 -o pid,user",
		"ps --ppid 2 -o pid,ppid,comm", "ps --user=root --no-headers -o pid", "ps -p 1 -C kthreadd", "ps -C pool_workqueue_release",
		"ps x -p 2", "ps -s 1 -o pid,sid", "ps -e -opid,stat,tname,tt,ucmd,ucomm,command,pcpu,pmem,vsize,rssize,rsz,euser,uname",
	} {
		checkPs(t, line)
	}
	for _, line := range []string{"ps -o foo", "ps -p abc", "ps -p", "ps --bogus", "ps -o pid,,comm", "ps -o ,", "ps -o pid:0",
		"ps -p 999999", "ps -q", "ps -C", "ps -u nosuchuser", "ps -p 0", "ps -p 1,,2", "ps -p ,1", "ps --ppid", "ps -u 4294967295",
		"ps -p 99999999999", "ps -U", "ps --sid x", "ps -p 0x10000000000"} {
		wout, werr, wcode := hostRun(t, psHostEnv(), "", line)
		var out, errb bytes.Buffer
		code := dispatch(strings.Fields(line), strings.NewReader(""), &out, &errb)
		if out.String() != wout || errb.String() != werr || code != wcode {
			t.Errorf("%s:\n got %q %q %d\nwant %q %q %d", line, out.String(), errb.String(), code, wout, werr, wcode)
		}
	}
}

func checkPs(t *testing.T, line string) {
	t.Helper()
	env := psHostEnv()
	idle1 := psIdleSnapshot()
	before, werr, wcode := hostRun(t, env, "", line)
	var out, errb bytes.Buffer
	code := dispatch(strings.Fields(line), strings.NewReader(""), &out, &errb)
	after, _, _ := hostRun(t, env, "", line)
	idle2 := psIdleSnapshot()
	if errb.String() != werr || code != wcode {
		t.Errorf("%s: stderr %q exit %d, want %q %d", line, errb.String(), code, werr, wcode)
	}
	header := !strings.Contains(line, "--no-headers") && !strings.Contains(line, "pid=,comm=") && !strings.Contains(line, "pid=PROCESS -o comm=")
	w1, w2, got := psLinesByPid(before, header), psLinesByPid(after, header), psLinesByPid(out.String(), header)
	compared := 0
	for pid, w := range w1 {
		// Only processes that did not run in between: their CPU time
		// and memory held still, so only the clock moved (etime, %CPU
		// fall), and the two host runs agreeing pins what this one saw.
		// Whether such a process is listed as sleeping or idle can still
		// change, so state letters compare as one.
		if pid != -1 && (idle1[pid] == "" || idle1[pid] != idle2[pid]) || psMaskState(w2[pid]) != psMaskState(w) {
			continue
		}
		g, ok := got[pid]
		if !ok {
			t.Errorf("%s: pid %d missing\n got %q", line, pid, out.String())
			continue
		}
		if psMaskState(g) != psMaskState(w) {
			t.Errorf("%s: pid %d\n got %q\nwant %q", line, pid, g, w)
		}
		compared++
	}
	if compared == 0 {
		t.Errorf("%s: no line to compare (the host ps printed %q)", line, before)
	}
}

// psHostEnv is the host ps's environment: a UTF-8 locale, as this ps
// assumes, and this process's time zone (Go fixes time.Local once, from
// $TZ or /etc/localtime, so the host ps must see the same).
func psHostEnv() []string {
	env := []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8"}
	if tz, ok := os.LookupEnv("TZ"); ok {
		env = append(env, "TZ="+tz)
	}
	return env
}

// psIdleSnapshot records, for each process of the host that is not on a
// CPU and is no kernel worker (whose names change as they take work),
// its CPU time and memory, to tell which processes held still.
func psIdleSnapshot() map[int]string {
	m := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		p, err := parsePsStat(string(b))
		if err != nil || p.state == 'R' || strings.HasPrefix(p.comm, "kworker") {
			continue
		}
		m[pid] = fmt.Sprint(p.utime, p.stime, p.vmSizeKB, p.vmRSSKB, p.nlwp)
	}
	return m
}

// psMaskState writes every state-like field (R, S, D, I, with procps's
// flags after it) as S.
func psMaskState(s string) string {
	state := regexp.MustCompile(`^[RSDI][<NLsl+]*$`)
	b := []byte(s)
	for _, loc := range regexp.MustCompile(`\S+`).FindAllStringIndex(s, -1) {
		if state.MatchString(s[loc[0]:loc[1]]) {
			b[loc[0]] = 'S'
		}
	}
	return string(b)
}

// psLinesByPid indexes ps output lines by the first number on them (the
// pid, in every format tested here but "args,pid", where it is the last;
// the header is -1).
func psLinesByPid(out string, header bool) map[int]string {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	m := map[int]string{}
	if header && len(lines) > 0 {
		m[-1] = lines[0]
		lines = lines[1:]
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		for _, x := range append([]string{f[len(f)-1]}, f...) {
			if n, err := strconv.Atoi(x); err == nil {
				if _, dup := m[n]; !dup {
					m[n] = l
				}
				break
			}
		}
	}
	return m
}
