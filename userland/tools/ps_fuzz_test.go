package main

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// FuzzPs feeds ps's parsers what a hostile process table and command
// line could hold: /proc/<pid>/stat and status text, -o format lists and
// argument vectors. None may panic, and a line is laid out for any
// process they produce. Seeds live in testdata/fuzz/FuzzPs.
func FuzzPs(f *testing.F) {
	f.Add("4 (sleep) S 2 2 1 34816 2 4194304 0 0 0 0 5 1 0 0 20 0 1 0 150 1114112 272 18446744073709551615 1",
		"Uid:\t1000\t1000\t1000\t1000\nVmSize:\t1088 kB\nVmRSS:\t1088 kB\n", "pid,ppid,user,comm,args,stat,tty,time,etime,rss,vsz,%cpu,%mem", "-ef")
	f.Add("9 (a) b) Z 1 1 1 0 -1 0", "VmLck: x", "pid=X Y,comm:3", "aux")
	f.Add("1 (init) R 0 0 0 1083436 -5 0 0 0 0 0 99999999999 1 0 0 20 -3 4 0 0 0 0", "", "pid:0,,", "-p 1,2 --no-headers")
	f.Fuzz(func(t *testing.T, stat, status, format, argline string) {
		o, _ := parsePsArgs(strings.Fields(argline))
		fields, errMsg := psParseFormat(format)
		if errMsg != "" {
			fields, _ = psParseFormat(psFullFormat)
		}
		_, _ = psBuildFormat(o)
		p, err := parsePsStat(stat)
		if err != nil {
			return
		}
		parsePsStatus(p, status)
		p.cmdline = psCmdline([]byte(status))
		c := &psCtx{uptime: 12.5, memTotalKB: 1 << 20, users: map[uint32]string{1000: "user", 0: "a-very-long-user-name"}}
		w := bufio.NewWriter(io.Discard)
		for _, cols := range []int{1, 80, psOutbufSize} {
			psLine(w, c, p, fields, cols)
			psLine(w, c, nil, fields, cols)
		}
		_ = psWanted(o, p, p)
	})
}
