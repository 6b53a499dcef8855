package shell

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/secexec/secexec/userland/internal/sysmsg"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

func sysText(err error) string { return sysmsg.Text(err) }

func matchPattern(pat, s string) bool {
	re, err := pattern.Regexp(pat, pattern.EntireString|pattern.ExtendedOperators)
	if err != nil {
		return pat == s
	}
	return regexpMatch(re, s)
}

func (s *Shell) read(args []string) int {
	args = args[1:]
	raw, silent := false, false
	delim := byte('\n')
	nchars := -1
	prompt, arrName := "", ""
	fd := 0
	exact := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		a := args[0]
		args = args[1:]
		for i := 1; i < len(a); i++ {
			opt := a[i]
			takes := strings.IndexByte("pdnNatu", opt) >= 0
			val := ""
			if takes {
				if i+1 < len(a) {
					val = a[i+1:]
				} else if len(args) > 0 {
					val = args[0]
					args = args[1:]
				} else {
					s.berr("read", "-%c: option requires an argument", opt)
					return 2
				}
			}
			switch opt {
			case 'r':
				raw = true
			case 's':
				silent = true
			case 'p':
				prompt = val
			case 'd':
				if val == "" {
					delim = 0
				} else {
					delim = val[0]
				}
			case 'n', 'N':
				n, err := strconv.Atoi(val)
				if err != nil {
					s.berr("read", "%s: invalid number", val)
					return 2
				}
				nchars = n
				if opt == 'N' {
					exact = true
				}
			case 'a':
				arrName = val
			case 't':
			case 'u':
				n, err := strconv.Atoi(val)
				if err != nil {
					s.berr("read", "%s: invalid file descriptor specification", val)
					return 2
				}
				fd = n
			default:
				s.berr("read", "-%c: invalid option", opt)
				return 2
			}
			if takes {
				break
			}
		}
	}
	_ = silent
	if prompt != "" {
		// bash prints the prompt only when reading from a terminal.
		_ = prompt
	}
	o := s.fds.get(fd)
	if o == nil {
		s.berr("read", "%d: invalid file descriptor: Bad file descriptor", fd)
		return 1
	}
	var line string
	var ok bool
	var err error
	if exact {
		// -N: exactly that many characters, delimiters included.
		delim = 0
		var b []byte
		buf := make([]byte, 1)
		for len(b) < nchars {
			n, rerr := o.f.Read(buf)
			if n == 0 {
				if rerr != nil && rerr != io.EOF {
					err = rerr
				}
				break
			}
			b = append(b, buf[0])
		}
		ok = len(b) == nchars
		if arrName == "" && len(args) <= 1 {
			name := "REPLY"
			if len(args) == 1 {
				name = args[0]
			}
			_ = s.setVarRef(name, string(b))
			if !ok {
				return 1
			}
			return 0
		}
		line = string(b)
	} else if raw {
		line, ok, err = readLine(o.f, delim, nchars)
	} else {
		// Backslash escapes the next character; backslash-newline
		// continues the line.
		var b strings.Builder
		for {
			var part string
			part, ok, err = readLine(o.f, delim, nchars)
			i := 0
			for i < len(part) {
				if part[i] == '\\' && i+1 < len(part) {
					b.WriteByte('\x00')
					b.WriteByte(part[i+1])
					i += 2
					continue
				}
				if part[i] == '\\' && i+1 == len(part) {
					break
				}
				b.WriteByte(part[i])
				i++
			}
			if ok && strings.HasSuffix(part, "\\") && !strings.HasSuffix(part, "\\\\") && delim == '\n' {
				continue
			}
			break
		}
		line = b.String()
	}
	if err != nil {
		s.berr("read", "read error: %d: %s", fd, sysText(err))
		return 1
	}
	names := args
	ifs := s.env.str("IFS")
	if !s.env.Get("IFS").IsSet() {
		ifs = " \t\n"
	}
	if arrName != "" {
		fields := splitIFS(line, ifs, -1, !raw)
		if fields == nil {
			fields = []string{}
		}
		_ = s.env.Set(arrName, expand.Variable{Set: true, Kind: expand.Indexed, List: fields})
	} else {
		if len(names) == 0 {
			v := line
			if !raw {
				v = unescapeRead(v)
			}
			_ = s.env.setStr("REPLY", v)
		} else {
			fields := splitIFS(line, ifs, len(names), !raw)
			for i, n := range names {
				v := ""
				if i < len(fields) {
					v = fields[i]
				}
				if err := s.setVarRef(n, v); err != nil {
					s.berr("read", "`%s': not a valid identifier", n)
					return 1
				}
			}
		}
	}
	if !ok && (line == "" || true) {
		if nchars < 0 || len(line) < nchars {
			return 1
		}
	}
	return 0
}

// unescapeRead drops the markers read leaves before escaped characters.
func unescapeRead(s string) string { return strings.ReplaceAll(s, "\x00", "") }

// splitIFS splits like read: IFS whitespace trims and separates, other
// IFS characters separate exactly; the last of n fields takes the rest.
// Characters after a \x00 marker are escaped (never separators).
func splitIFS(line, ifs string, n int, escaped bool) []string {
	isWS := func(c byte) bool { return (c == ' ' || c == '\t' || c == '\n') && strings.IndexByte(ifs, c) >= 0 }
	isSep := func(c byte) bool { return strings.IndexByte(ifs, c) >= 0 }
	var fields []string
	i := 0
	for i < len(line) && isWS(line[i]) {
		i++
	}
	for i < len(line) {
		if n > 0 && len(fields) == n-1 {
			rest := line[i:]
			// Trailing IFS whitespace is trimmed from the last field.
			j := len(rest)
			for j > 0 && isWS(rest[j-1]) && (j < 2 || rest[j-2] != 0) {
				j--
			}
			rest = rest[:j]
			// A single trailing non-whitespace separator is dropped.
			if len(rest) > 0 && isSep(rest[len(rest)-1]) && !isWS(rest[len(rest)-1]) && (len(rest) < 2 || rest[len(rest)-2] != 0) {
				trimmed := rest[:len(rest)-1]
				if !strings.ContainsAny(stripEsc(trimmed), nonWS(ifs)) {
					rest = trimmed
				}
			}
			fields = append(fields, unescapeRead(rest))
			return fields
		}
		var b strings.Builder
		for i < len(line) {
			c := line[i]
			if c == 0 && i+1 < len(line) {
				b.WriteByte(line[i+1])
				i += 2
				continue
			}
			if isSep(c) {
				break
			}
			b.WriteByte(c)
			i++
		}
		fields = append(fields, b.String())
		// Skip whitespace, at most one non-whitespace separator, whitespace.
		for i < len(line) && isWS(line[i]) {
			i++
		}
		if i < len(line) && isSep(line[i]) && !isWS(line[i]) {
			i++
			for i < len(line) && isWS(line[i]) {
				i++
			}
			if i == len(line) && (n < 0 || len(fields) < n) {
				// "a:" gives one field; "a::" gives two.
			}
		}
	}
	return fields
}

func stripEsc(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0 && i+1 < len(s) {
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func nonWS(ifs string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' {
			return -1
		}
		return r
	}, ifs)
}

func (s *Shell) mapfile(args []string) int {
	name := args[0]
	args = args[1:]
	trim := false
	delim := byte('\n')
	fd := 0
	count, origin, skip := -1, 0, 0
	callback, quantum := "", 5000
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		a := args[0]
		args = args[1:]
		val := ""
		if strings.IndexByte("dnOsuCc", a[1]) >= 0 {
			if len(a) > 2 {
				val = a[2:]
			} else if len(args) > 0 {
				val = args[0]
				args = args[1:]
			}
		}
		switch a[1] {
		case 't':
			trim = true
		case 'd':
			if val == "" {
				delim = 0
			} else {
				delim = val[0]
			}
		case 'n':
			count, _ = strconv.Atoi(val)
			if count == 0 {
				count = -1
			}
		case 'O':
			origin, _ = strconv.Atoi(val)
		case 's':
			skip, _ = strconv.Atoi(val)
		case 'u':
			fd, _ = strconv.Atoi(val)
		case 'C':
			callback = val
		case 'c':
			quantum, _ = strconv.Atoi(val)
			if quantum < 1 {
				quantum = 1
			}
		default:
			s.berr(name, "%s: invalid option", a)
			return 2
		}
	}
	arr := "MAPFILE"
	if len(args) > 0 {
		arr = args[0]
	}
	o := s.fds.get(fd)
	if o == nil {
		s.berr(name, "%d: invalid file descriptor: Bad file descriptor", fd)
		return 1
	}
	var v expand.Variable
	if origin > 0 {
		v = s.env.Get(arr)
	}
	i := origin
	for count < 0 || i-origin < count {
		line, ok, err := readLine(o.f, delim, -1)
		if err != nil || !ok && line == "" {
			break
		}
		if skip > 0 {
			skip--
			continue
		}
		if !trim && ok {
			line += string(delim)
		}
		v = indexedSet(v, i, line)
		if callback != "" && (i-origin+1)%quantum == 0 {
			_ = s.env.Set(arr, v)
			s.evalString(callback+" "+strconv.Itoa(i)+" "+shellQuote(line), "mapfile")
		}
		i++
		if !ok {
			break
		}
	}
	if v.Kind != expand.Indexed {
		v = expand.Variable{Set: true, Kind: expand.Indexed, List: []string{}}
	}
	if err := s.env.Set(arr, v); err != nil {
		s.berr(name, "%s", err)
		return 1
	}
	return 0
}

var signalNames = map[string]int{"HUP": 1, "INT": 2, "QUIT": 3, "ILL": 4, "TRAP": 5, "ABRT": 6, "BUS": 7, "FPE": 8, "KILL": 9, "USR1": 10, "SEGV": 11, "USR2": 12, "PIPE": 13, "ALRM": 14, "TERM": 15, "CHLD": 17, "CONT": 18, "STOP": 19, "TSTP": 20}

func sigName(n string) (string, bool) {
	u := strings.ToUpper(strings.TrimPrefix(strings.ToUpper(n), "SIG"))
	switch u {
	case "EXIT", "0":
		return "EXIT", true
	case "ERR", "DEBUG", "RETURN":
		return u, true
	}
	if v, err := strconv.Atoi(n); err == nil {
		for k, x := range signalNames {
			if x == v {
				return k, true
			}
		}
		return "", false
	}
	if _, ok := signalNames[u]; ok {
		return u, true
	}
	return "", false
}

func (s *Shell) trap(args []string) int {
	args = args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	traps := s.traps
	if s.isSubshell && !s.ownTraps && s.parentTraps != nil {
		// A subshell that set no trap lists its parent's, as bash does
		// (traps=$(trap -p), trap -p | ...).
		traps = s.parentTraps
	}
	if len(args) == 0 || args[0] == "-p" {
		keys := make([]string, 0, len(traps))
		if len(args) > 1 {
			for _, a := range args[1:] {
				if n, ok := sigName(a); ok {
					if _, set := traps[n]; set {
						keys = append(keys, n)
					}
				}
			}
		} else {
			for k := range traps {
				keys = append(keys, k)
			}
			sort.Strings(keys)
		}
		for _, k := range keys {
			name := k
			if k != "EXIT" && k != "ERR" && k != "DEBUG" && k != "RETURN" {
				name = "SIG" + k
			}
			s.out(1, "trap -- "+shellQuoteAlways(traps[k])+" "+name+"\n")
		}
		return 0
	}
	if len(args) == 1 {
		// trap SIG resets.
		if n, ok := sigName(args[0]); ok {
			s.ownTraps = true
			delete(s.traps, n)
			return 0
		}
	}
	s.ownTraps = true
	action := args[0]
	status := 0
	for _, sg := range args[1:] {
		n, ok := sigName(sg)
		if !ok {
			s.berr("trap", "%s: invalid signal specification", sg)
			status = 1
			continue
		}
		if action == "-" {
			delete(s.traps, n)
		} else {
			s.traps[n] = action
		}
	}
	return status
}

func shellQuoteAlways(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }

// job is an asynchronous command.
type job struct {
	id     int
	pid    int
	text   string
	mu     sync.Mutex
	done   chan struct{}
	status int
	waited bool
	kids   []int // programs it runs now
	hidden bool  // a process substitution: waited for, not listed
	killed int   // the signal kill sent it
	cancel func()
}

func (j *job) finish(status int) {
	j.mu.Lock()
	if j.killed != 0 {
		status = 128 + j.killed
	}
	j.status = status
	j.mu.Unlock()
	close(j.done)
}

func (j *job) addKid(pid int) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.kids = append(j.kids, pid)
	return j.killed
}

func (j *job) dropKid(pid int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i, k := range j.kids {
		if k == pid {
			j.kids = append(j.kids[:i], j.kids[i+1:]...)
			break
		}
	}
}

func (j *job) isDone() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

func (sh *shared) addJob(pid int, text string) *job {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	id := 1
	for _, x := range sh.jobs {
		if !x.hidden {
			id = x.id + 1
		}
	}
	j := &job{id: id, pid: pid, text: text, done: make(chan struct{})}
	sh.jobs = append(sh.jobs, j)
	return j
}

func (sh *shared) findJob(spec string) *job {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if strings.HasPrefix(spec, "%") {
		rest := spec[1:]
		if rest == "%" || rest == "+" || rest == "" || rest == "-" {
			skip := 0
			if rest == "-" {
				skip = 1
			}
			for i := len(sh.jobs) - 1; i >= 0; i-- {
				if !sh.jobs[i].waited && !sh.jobs[i].hidden {
					if skip == 0 {
						return sh.jobs[i]
					}
					skip--
				}
			}
			return nil
		}
		n, err := strconv.Atoi(rest)
		if err != nil {
			return nil
		}
		for _, j := range sh.jobs {
			if j.id == n && !j.hidden {
				return j
			}
		}
		return nil
	}
	pid, err := strconv.Atoi(spec)
	if err != nil {
		return nil
	}
	for _, j := range sh.jobs {
		if j.pid == pid {
			return j
		}
	}
	return nil
}

// waitJob waits for j while letting the shell's other goroutines run.
func (s *Shell) waitJob(j *job) int {
	<-j.done
	j.mu.Lock()
	defer j.mu.Unlock()
	j.waited = true
	return j.status
}

func (s *Shell) wait(args []string) int {
	args = args[1:]
	anyOne := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if args[0] == "-n" {
			anyOne = true
		}
		args = args[1:]
	}
	s.sh.mu.Lock()
	pending := slices.Clone(s.sh.jobs)
	s.sh.mu.Unlock()
	if anyOne {
		var live []*job
		for _, j := range pending {
			if !j.waited {
				live = append(live, j)
			}
		}
		if len(live) == 0 {
			return 127
		}
		// Wait for whichever ends first.
		first := make(chan *job, len(live))
		for _, j := range live {
			go func(j *job) { <-j.done; first <- j }(j)
		}
		j := <-first
		return s.waitJob(j)
	}
	if len(args) == 0 {
		for _, j := range pending {
			if !j.waited {
				s.waitJob(j)
			}
		}
		return 0
	}
	status := 0
	for _, a := range args {
		j := s.sh.findJob(a)
		if j == nil {
			if strings.HasPrefix(a, "%") {
				s.berr("wait", "%s: no such job", a)
			} else {
				s.berr("wait", "pid %s is not a child of this shell", a)
			}
			status = 127
			continue
		}
		status = s.waitJob(j)
	}
	return status
}

func (s *Shell) kill(args []string) int {
	args = args[1:]
	sig := 15
	if len(args) > 0 && (args[0] == "-l" || args[0] == "-L") {
		if len(args) == 1 {
			s.out(1, " 1) SIGHUP	 2) SIGINT	 3) SIGQUIT	 4) SIGILL	 5) SIGTRAP\n 6) SIGABRT	 7) SIGBUS	 8) SIGFPE	 9) SIGKILL	10) SIGUSR1\n11) SIGSEGV	12) SIGUSR2	13) SIGPIPE	14) SIGALRM	15) SIGTERM\n")
			return 0
		}
		status := 0
		for _, a := range args[1:] {
			if n, err := strconv.Atoi(a); err == nil {
				if n > 128 {
					n -= 128
				}
				name := ""
				for k, v := range signalNames {
					if v == n {
						name = k
					}
				}
				if name == "" {
					s.berr("kill", "%s: invalid signal specification", a)
					status = 1
					continue
				}
				s.out(1, name+"\n")
				continue
			}
			n, ok := signalNames[strings.TrimPrefix(strings.ToUpper(a), "SIG")]
			if !ok {
				s.berr("kill", "%s: invalid signal specification", a)
				status = 1
				continue
			}
			s.out(1, strconv.Itoa(n)+"\n")
		}
		return status
	}
	if len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		spec := args[0][1:]
		if spec == "s" && len(args) > 1 {
			spec = args[1]
			args = args[1:]
		}
		args = args[1:]
		if n, err := strconv.Atoi(spec); err == nil {
			sig = n
		} else if n, ok := signalNames[strings.TrimPrefix(strings.ToUpper(spec), "SIG")]; ok {
			sig = n
		} else {
			s.berr("kill", "%s: invalid signal specification", spec)
			return 1
		}
	}
	if len(args) == 0 {
		s.out(2, "kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]\n")
		return 2
	}
	status := 0
	for _, a := range args {
		if j := s.sh.findJob(a); j != nil {
			if err := s.killJob(j, sig); err != nil {
				if strings.HasPrefix(a, "%") {
					s.berr("kill", "%s: no such job", a)
				} else {
					s.berr("kill", "(%s) - %s", a, sysText(err))
				}
				status = 1
			}
			continue
		}
		if strings.HasPrefix(a, "%") {
			s.berr("kill", "%s: no such job", a)
			status = 1
			continue
		}
		pid, err := strconv.Atoi(a)
		if err != nil {
			s.berr("kill", "%s: arguments must be process or job IDs", a)
			status = 1
			continue
		}
		if pid == s.pid && sig != 0 && s.signalSelf(sig) {
			continue
		}
		if err := s.sh.sys.Kill(pid, sig); err != nil {
			s.berr("kill", "(%d) - %s", pid, sysText(err))
			status = 1
		}
	}
	return status
}

// killJob ends a job: its children get the signal, its goroutine stops
// at the next statement.
func (s *Shell) killJob(j *job, sig int) error {
	if j.isDone() {
		return syscall.ESRCH
	}
	if sig == 0 {
		return nil
	}
	switch sig {
	case 17, 18, 28: // CHLD, CONT, WINCH: ignored by default
		return nil
	}
	j.mu.Lock()
	j.killed = sig
	kids := slices.Clone(j.kids)
	cancel := j.cancel
	j.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	for _, k := range kids {
		_ = s.sh.sys.Kill(k, sig)
	}
	return nil
}

// jobsB is bash's jobs: -l adds the PID, -p prints only PIDs, -r and -s
// keep running and stopped jobs (none stop here), -n is every job (no
// job here changes state unseen), jobspecs pick jobs, and -x runs a
// command with each jobspec replaced by its PID.
func (s *Shell) jobsB(args []string) int {
	var long, pidsOnly, stoppedOnly bool
	args = args[1:]
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		a := args[0]
		if a == "--" {
			args = args[1:]
			break
		}
		if a == "-x" {
			return s.jobsExec(args[1:])
		}
		for _, c := range a[1:] {
			switch c {
			case 'l':
				long = true
			case 'p':
				pidsOnly = true
			case 's':
				stoppedOnly = true
			case 'r', 'n':
			default:
				s.berr("jobs", "-%c: invalid option", c)
				s.out(2, "jobs: usage: jobs [-lnprs] [jobspec ...] or jobs -x command [args]\n")
				return 2
			}
		}
		args = args[1:]
	}
	var pick []*job
	status := 0
	for _, spec := range args {
		j := s.sh.findJob(spec)
		if j == nil {
			s.berr("jobs", "%s: no such job", spec)
			status = 1
			continue
		}
		pick = append(pick, j)
	}
	if stoppedOnly {
		return status
	}
	s.sh.mu.Lock()
	defer s.sh.mu.Unlock()
	var live []*job
	for _, j := range s.sh.jobs {
		if !j.hidden && !j.isDone() {
			live = append(live, j)
		}
	}
	for i, j := range live {
		if len(args) > 0 && !slices.Contains(pick, j) {
			continue
		}
		if pidsOnly {
			s.out(1, strconv.Itoa(j.pid)+"\n")
			continue
		}
		mark := " "
		switch i {
		case len(live) - 1:
			mark = "+"
		case len(live) - 2:
			mark = "-"
		}
		if long {
			s.out(1, fmt.Sprintf("[%d]%s %5d Running                 %s &\n", j.id, mark, j.pid, j.text))
			continue
		}
		s.out(1, fmt.Sprintf("[%d]%s  Running                 %s &\n", j.id, mark, j.text))
	}
	return status
}

// jobsExec is jobs -x: the command with each jobspec among its arguments
// replaced by the job's PID.
func (s *Shell) jobsExec(args []string) int {
	if len(args) == 0 {
		s.out(2, "jobs: usage: jobs [-lnprs] [jobspec ...] or jobs -x command [args]\n")
		return 2
	}
	argv := slices.Clone(args)
	for i, a := range argv {
		if strings.HasPrefix(a, "%") {
			j := s.sh.findJob(a)
			if j == nil {
				s.berr("jobs", "%s: no such job", a)
				return 1
			}
			argv[i] = strconv.Itoa(j.pid)
		}
	}
	s.run(argv, nil)
	return s.lastStatus
}

func (s *Shell) getopts(args []string) int {
	if len(args) < 3 {
		s.out(2, "getopts: usage: getopts optstring name [arg ...]\n")
		return 2
	}
	optstring, name := args[1], args[2]
	params := s.frame.params
	if len(args) > 3 {
		params = args[3:]
	}
	silent := strings.HasPrefix(optstring, ":")
	if silent {
		optstring = optstring[1:]
	}
	optind, err := strconv.Atoi(s.env.str("OPTIND"))
	if err != nil || optind < 1 {
		optind = 1
	}
	// s.optPos is the position inside a grouped argument (-abc).
	if optind != s.getoptsInd {
		s.optPos = 0
	}
	end := func() int {
		_ = s.env.setStr(name, "?")
		_ = s.env.setStr("OPTIND", strconv.Itoa(optind))
		s.getoptsInd = optind
		return 1
	}
	if optind > len(params) {
		return end()
	}
	arg := params[optind-1]
	if s.optPos == 0 {
		if len(arg) < 2 || arg[0] != '-' {
			return end()
		}
		if arg == "--" {
			optind++
			return end()
		}
		s.optPos = 1
	}
	c := arg[s.optPos]
	s.optPos++
	next := func() {
		if s.optPos >= len(arg) {
			optind++
			s.optPos = 0
		}
	}
	i := strings.IndexByte(optstring, c)
	if i < 0 || c == ':' {
		if silent {
			_ = s.env.setStr("OPTARG", string(c))
		} else {
			fmt.Fprintf(s.stderr(), "%s: illegal option -- %c\n", s.frame.arg0, c)
			_ = s.unsetVar("OPTARG")
		}
		_ = s.env.setStr(name, "?")
		next()
		_ = s.env.setStr("OPTIND", strconv.Itoa(optind))
		s.getoptsInd = optind
		return 0
	}
	if i+1 < len(optstring) && optstring[i+1] == ':' {
		var val string
		if s.optPos < len(arg) {
			val = arg[s.optPos:]
			optind++
			s.optPos = 0
		} else if optind < len(params) {
			val = params[optind]
			optind += 2
			s.optPos = 0
		} else {
			optind++
			s.optPos = 0
			if silent {
				_ = s.env.setStr(name, ":")
				_ = s.env.setStr("OPTARG", string(c))
			} else {
				fmt.Fprintf(s.stderr(), "%s: option requires an argument -- %c\n", s.frame.arg0, c)
				_ = s.env.setStr(name, "?")
				_ = s.unsetVar("OPTARG")
			}
			_ = s.env.setStr("OPTIND", strconv.Itoa(optind))
			s.getoptsInd = optind
			return 0
		}
		_ = s.env.setStr("OPTARG", val)
	} else {
		next()
		_ = s.unsetVar("OPTARG")
	}
	_ = s.env.setStr(name, string(c))
	_ = s.env.setStr("OPTIND", strconv.Itoa(optind))
	s.getoptsInd = optind
	return 0
}

func (s *Shell) unsetVar(name string) error {
	_, sc := s.env.lookup(name)
	if sc != nil {
		delete(sc.vars, name)
	}
	return nil
}

var _ = io.EOF
var _ = syscall.EPIPE
var _ = syntax.LangBash

// signalSelf delivers sig to the shell itself, as kill $$ does: a trap
// runs, an ignored signal does nothing, and anything else ends the shell
// the way the signal would (the host ends the process).
func (s *Shell) signalSelf(sig int) bool {
	name := ""
	for k, v := range signalNames {
		if v == sig {
			name = k
		}
	}
	switch name {
	case "CHLD", "CONT", "WINCH", "URG":
		return true
	}
	if cmd, ok := s.traps[name]; ok && name != "KILL" && name != "STOP" {
		if cmd != "" {
			s.runTrap(cmd)
		}
		return true
	}
	return false
}
