package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ps follows procps-ng 4.0.2's ps (src/ps): its default, -f and BSD u
// formats, -o with procps's column table (headers, widths, justification)
// and its column layout, in which a column that overflows pushes the next
// ones right and the following spaces take the slack back. Everything
// comes from /proc, which in a VM is the kernel's process table.

// psHertz is USER_HZ, the unit of /proc's times.
const psHertz = 100

// psOutbufSize is procps's OUTBUF_SIZE: the line width when stdout is not
// a terminal.
const psOutbufSize = 2 * 64 * 1024

// psSpaceMax is procps's SPACE_AMOUNT, the most padding one column gets.
const psSpaceMax = 144

// psJust is how a column is aligned.
type psJust int

const (
	justRight psJust = iota
	justLeft
	// justUser is a user name: left-aligned, '+'-truncated to the width.
	justUser
	// justUnlimited is text that may run on when it is the last column.
	justUnlimited
)

// psColumn is one entry of procps's format table.
type psColumn struct {
	header string
	width  int
	just   psJust
	pr     func(c *psCtx, p *psProc, room int) string
}

// psProc is one process as /proc shows it.
type psProc struct {
	pid, ppid, pgid, sid, tty, tpgid int
	state                            byte
	comm                             string
	cmdline                          string // as procps reads it: separators and newlines as spaces
	euid, ruid                       uint32
	utime, stime                     uint64
	nice, nlwp                       int
	policy                           int    // scheduling policy: 0 normal, 3 batch, others real-time or idle
	start                            uint64 // ticks after boot
	vmSizeKB, vmRSSKB, vmLckKB       uint64
}

// psCtx is what the columns need besides the process.
type psCtx struct {
	now        time.Time
	boot       time.Time
	uptime     float64
	memTotalKB uint64
	users      map[uint32]string
	unixF      bool // -f: comm shows the command line
}

// psFormats is procps's format table, for the columns ps supports.
var psFormats = map[string]psColumn{
	"%cpu":       {"%CPU", 4, justRight, prPcpu},
	"%mem":       {"%MEM", 4, justRight, prPmem},
	"args":       {"COMMAND", 27, justUnlimited, prArgs},
	"bsdtime":    {"TIME", 6, justRight, prBsdtime},
	"c":          {"C", 2, justRight, prC},
	"cmd":        {"CMD", 27, justUnlimited, prArgs},
	"comm":       {"COMMAND", 15, justUnlimited, prComm},
	"command":    {"COMMAND", 27, justUnlimited, prArgs},
	"cputime":    {"TIME", 8, justRight, prTime},
	"etime":      {"ELAPSED", 11, justRight, prEtime},
	"etimes":     {"ELAPSED", 7, justRight, prEtimes},
	"euid":       {"EUID", 5, justRight, prUID},
	"euser":      {"EUSER", 8, justUser, prUser},
	"lstart":     {"STARTED", 24, justRight, prLstart},
	"ni":         {"NI", 3, justRight, prNice},
	"nice":       {"NI", 3, justRight, prNice},
	"nlwp":       {"NLWP", 4, justRight, func(_ *psCtx, p *psProc, _ int) string { return strconv.Itoa(p.nlwp) }},
	"pcpu":       {"%CPU", 4, justRight, prPcpu},
	"pgid":       {"PGID", 5, justRight, func(_ *psCtx, p *psProc, _ int) string { return strconv.Itoa(p.pgid) }},
	"pgrp":       {"PGRP", 5, justRight, func(_ *psCtx, p *psProc, _ int) string { return strconv.Itoa(p.pgid) }},
	"pid":        {"PID", 5, justRight, func(_ *psCtx, p *psProc, _ int) string { return strconv.Itoa(p.pid) }},
	"pmem":       {"%MEM", 4, justRight, prPmem},
	"ppid":       {"PPID", 5, justRight, func(_ *psCtx, p *psProc, _ int) string { return strconv.Itoa(p.ppid) }},
	"rss":        {"RSS", 5, justRight, func(_ *psCtx, p *psProc, _ int) string { return strconv.FormatUint(p.vmRSSKB, 10) }},
	"rssize":     {"RSS", 5, justRight, func(_ *psCtx, p *psProc, _ int) string { return strconv.FormatUint(p.vmRSSKB, 10) }},
	"rsz":        {"RSZ", 5, justRight, func(_ *psCtx, p *psProc, _ int) string { return strconv.FormatUint(p.vmRSSKB, 10) }},
	"s":          {"S", 1, justLeft, func(_ *psCtx, p *psProc, _ int) string { return string(p.state) }},
	"sess":       {"SESS", 5, justRight, func(_ *psCtx, p *psProc, _ int) string { return strconv.Itoa(p.sid) }},
	"session":    {"SESS", 5, justRight, func(_ *psCtx, p *psProc, _ int) string { return strconv.Itoa(p.sid) }},
	"sid":        {"SID", 5, justRight, func(_ *psCtx, p *psProc, _ int) string { return strconv.Itoa(p.sid) }},
	"start":      {"STARTED", 8, justRight, prStart},
	"start_time": {"START", 5, justRight, prStime},
	"stat":       {"STAT", 4, justLeft, prStat},
	"state":      {"S", 1, justLeft, func(_ *psCtx, p *psProc, _ int) string { return string(p.state) }},
	"stime":      {"STIME", 5, justRight, prStime},
	"time":       {"TIME", 8, justRight, prTime},
	"times":      {"TIME", 8, justRight, func(_ *psCtx, p *psProc, _ int) string { return strconv.FormatUint((p.utime+p.stime)/psHertz, 10) }},
	"tname":      {"TTY", 8, justLeft, prTTY},
	"tpgid":      {"TPGID", 5, justRight, func(_ *psCtx, p *psProc, _ int) string { return strconv.Itoa(p.tpgid) }},
	"tt":         {"TT", 8, justLeft, prTTY},
	"tty":        {"TT", 8, justLeft, prTTY},
	"ucmd":       {"CMD", 15, justUnlimited, prComm},
	"ucomm":      {"COMMAND", 15, justUnlimited, prComm},
	"uid":        {"UID", 5, justRight, prUID},
	"uid_hack":   {"UID", 8, justUser, prUser},
	"uname":      {"USER", 8, justUser, prUser},
	"user":       {"USER", 8, justUser, prUser},
	"vsize":      {"VSZ", 6, justRight, prVsz},
	"vsz":        {"VSZ", 6, justRight, prVsz},
}

// The formats procps builds for its option sets.
const (
	psDefaultFormat = "pid,tname,time,ucmd"
	psFullFormat    = "uid_hack,pid,ppid,c,stime,tname,time,cmd"
	psUserFormat    = "user,pid,pcpu,pmem,vsz,rss,tname,stat,start_time,bsdtime,args"
	psBSDFormat     = "pid,tname,stat,bsdtime,args"
)

// psField is one column of the output: a format table entry and its
// header, which -o NAME=HEADER may rename.
type psField struct {
	psColumn
	name string
}

const psUsage = `
Usage:
 ps [options]

 Try 'ps --help <simple|list|output|threads|misc|all>'
  or 'ps --help <s|l|o|t|m|a>'
 for additional help text.

For more details see ps(1).
`

// psOptions is a parsed command line.
type psOptions struct {
	all        bool // -e, -A, or BSD a and x together
	bsdA, bsdX bool
	bsd        bool // a BSD option was given: BSD's default selection
	fullF      bool // -f
	bsdU       bool // u
	// lists are the selection lists (-p, -C, -u, ...): a process on any
	// of them is listed.
	lists     []psList
	formats   []string // -o lists
	noHeaders bool
}

func psError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "error: %s\n%s", msg, psUsage)
	return 1
}

func runPs(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, errMsg := parsePsArgs(args[1:])
	if errMsg != "" {
		return psError(stderr, errMsg)
	}
	fields, errMsg := psBuildFormat(o)
	if errMsg != "" {
		return psError(stderr, errMsg)
	}
	c, self, err := psContext()
	if err != nil {
		fmt.Fprintf(stderr, "ps: %v\n", err)
		return 1
	}
	c.unixF = o.fullF
	procs := psReadAll()
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	cols := psScreenCols(fields)
	header := !o.noHeaders
	if header {
		header = slices.ContainsFunc(fields, func(f psField) bool { return f.header != "" })
	}
	if header {
		psLine(w, c, nil, fields, cols)
	}
	n := 0
	for _, p := range procs {
		if !psWanted(o, p, self) {
			continue
		}
		psLine(w, c, p, fields, cols)
		n++
	}
	if n == 0 {
		return 1
	}
	return 0
}

// parsePsArgs reads procps's three option styles: UNIX (-ef, -p 1,2,
// -o pid,comm), BSD (aux, without a dash) and GNU long options.
func parsePsArgs(args []string) (psOptions, string) {
	var o psOptions
	for i := 0; i < len(args); i++ {
		a := args[i]
		// next returns an option's argument: the rest of this word, or
		// the next word.
		next := func(rest string) (string, bool) {
			if rest != "" {
				return rest, true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		switch {
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			switch name {
			case "no-headers", "no-heading", "noheader", "noheaders", "no-header":
				o.noHeaders = true
			case "format":
				if !hasVal {
					v, ok := next("")
					if !ok {
						return o, "format specification must follow --format"
					}
					val = v
				}
				o.formats = append(o.formats, val)
			case "pid", "ppid", "sid", "user", "User":
				kind := map[string]psListKind{"pid": selPID, "ppid": selPPID, "sid": selSID, "user": selEUID, "User": selRUID}[name]
				if !hasVal {
					v, ok := next("")
					if !ok {
						return o, map[string]string{"pid": "list of process IDs must follow --pid",
							"ppid": "list of process IDs must follow --ppid", "sid": "list of session IDs must follow --sid",
							"user": "list of users must follow --user", "User": "list of real users must follow --User"}[name]
					}
					val = v
				}
				l, err := psParseList(kind, val)
				if err != "" {
					return o, err
				}
				o.lists = append(o.lists, l)
			default:
				return o, "unknown gnu long option"
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
		flags:
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'e', 'A':
					o.all = true
				case 'f':
					o.fullF = true
				case 'p', 'q', 'C', 's', 'u', 'U':
					// -q is procps's quick -p: the same selection here.
					v, ok := next(a[j+1:])
					if !ok {
						return o, map[byte]string{'p': "list of process IDs must follow -p", 'q': "List of process IDs must follow -q.",
							'C': "list of command names must follow -C", 's': "list of session IDs must follow -s",
							'u': "list of users must follow -u", 'U': "list of real users must follow -U"}[a[j]]
					}
					kind := map[byte]psListKind{'p': selPID, 'q': selPID, 'C': selComm, 's': selSID, 'u': selEUID, 'U': selRUID}[a[j]]
					l, err := psParseList(kind, v)
					if err != "" {
						return o, err
					}
					o.lists = append(o.lists, l)
					break flags
				case 'o':
					v, ok := next(a[j+1:])
					if !ok {
						return o, "format specification must follow -o"
					}
					o.formats = append(o.formats, v)
					break flags
				default:
					return o, "unsupported SysV option"
				}
			}
		default:
			o.bsd = true
			for j := 0; j < len(a); j++ {
				switch a[j] {
				case 'a':
					o.bsdA = true
				case 'x':
					o.bsdX = true
				case 'u':
					o.bsdU = true
				case 'w':
					// Wide output: lines are not cut off anyway when
					// stdout is not a terminal.
				default:
					return o, "unsupported option (BSD syntax)"
				}
			}
		}
	}
	if o.bsdA && o.bsdX {
		o.all = true
	}
	return o, ""
}

// psListKind is what a selection list matches.
type psListKind int

const (
	selPID psListKind = iota
	selPPID
	selSID
	selEUID
	selRUID
	selComm
)

// psList is one selection list.
type psList struct {
	kind  psListKind
	nums  []int64
	names []string
}

// psParseList is procps's parse_list: items separated by commas, spaces
// or tabs, no empty ones; process and session IDs are C numbers from 1 up,
// users a number or a name from /etc/passwd, commands any text.
func psParseList(kind psListKind, arg string) (psList, string) {
	l := psList{kind: kind}
	need := true
	for i := 0; i < len(arg); i++ {
		switch arg[i] {
		case ' ', ',', '\t':
			if need {
				return l, "improper list"
			}
			need = true
		default:
			need = false
		}
	}
	if need {
		return l, "improper list"
	}
	for _, item := range strings.FieldsFunc(arg, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		switch kind {
		case selComm:
			l.names = append(l.names, item)
		case selEUID, selRUID:
			n, err := strconv.ParseUint(item, 0, 64)
			if err != nil {
				uid, ok := psUserID(item)
				if !ok {
					return l, "user name does not exist"
				}
				n = uint64(uid)
			}
			if n > 0xfffffffe {
				return l, "user ID out of range"
			}
			l.nums = append(l.nums, int64(n))
		default:
			n, err := strconv.ParseUint(item, 0, 64)
			if err != nil {
				var ne *strconv.NumError
				if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
					return l, "process ID list syntax error"
				}
				return l, "process ID out of range"
			}
			if n < 1 || n > 0x7fffffff {
				return l, "process ID out of range"
			}
			l.nums = append(l.nums, int64(n))
		}
	}
	return l, ""
}

// psUserID looks a login name up in /etc/passwd.
func psUserID(name string) (uint32, bool) {
	for id, n := range psUsers() {
		if n == name {
			return id, true
		}
	}
	return 0, false
}

// matches reports whether p is on the list; a command name matches as
// procps compares them (the first 15 bytes when the name was cut there).
func (l psList) matches(p *psProc) bool {
	var v int64
	switch l.kind {
	case selComm:
		for _, n := range l.names {
			if len(p.comm) == 15 && len(n) >= 15 && p.comm == n[:15] || p.comm == n {
				return true
			}
		}
		return false
	case selPID:
		v = int64(p.pid)
	case selPPID:
		v = int64(p.ppid)
	case selSID:
		v = int64(p.sid)
	case selEUID:
		v = int64(p.euid)
	case selRUID:
		v = int64(p.ruid)
	}
	return slices.Contains(l.nums, v)
}

// psBuildFormat picks the columns: -o lists, else -f's, u's or the
// default.
func psBuildFormat(o psOptions) ([]psField, string) {
	switch {
	case len(o.formats) > 0:
		var out []psField
		for _, spec := range o.formats {
			fs, err := psParseFormat(spec)
			if err != "" {
				return nil, err
			}
			out = append(out, fs...)
		}
		return out, ""
	case o.fullF && o.bsdU:
		return nil, "conflicting format options"
	case o.fullF:
		fs, _ := psParseFormat(psFullFormat)
		return fs, ""
	case o.bsdU:
		fs, _ := psParseFormat(psUserFormat)
		return fs, ""
	case o.bsd:
		fs, _ := psParseFormat(psBSDFormat)
		return fs, ""
	}
	fs, _ := psParseFormat(psDefaultFormat)
	return fs, ""
}

// psParseFormat parses one -o list as procps's format_parse does:
// names separated by commas or white space (two separators in a row are
// an error, one at the end is allowed), "name=HEADER" renaming a column
// (only the last item's header may hold separators) and "name:WIDTH"
// setting its width.
func psParseFormat(spec string) ([]psField, string) {
	isSep := func(c byte) bool { return c == ' ' || c == ',' || c == '\t' || c == '\n' }
	items, need := 0, true
	for i := 0; i < len(spec); i++ {
		if isSep(spec[i]) {
			if need {
				return nil, "improper format list"
			}
			need = true
			continue
		}
		if need {
			items++
		}
		need = false
	}
	if items == 0 {
		if spec != "" {
			return nil, "improper format list"
		}
		return nil, "empty format list"
	}
	if need {
		spec = spec[:len(spec)-1]
	}
	var out []psField
	walk := spec
	for ; items > 0; items-- {
		item, rest := walk, ""
		if items > 1 {
			if k := strings.IndexAny(walk, " ,\t\n"); k >= 0 {
				item, rest = walk[:k], walk[k+1:]
			}
		}
		name, header, renamed := strings.Cut(item, "=")
		name, width, hasWidth := strings.Cut(name, ":")
		w := 0
		if hasWidth {
			n, err := strconv.Atoi(width)
			if err != nil || width == "" || width[0] == '0' || strings.Trim(width, "0123456789") != "" || n <= 0 {
				return nil, "column widths must be unsigned decimal numbers"
			}
			w = n
		}
		col, ok := psFormats[name]
		if !ok {
			return nil, fmt.Sprintf("unknown user-defined format specifier \"%s\"", name)
		}
		f := psField{psColumn: col, name: name}
		if psPidMaxColumns[name] {
			f.width = max(psPidLength(), len(col.header))
		}
		if renamed {
			f.header = header
			f.width = max(f.width, len(header))
		}
		if hasWidth {
			f.width = w
		}
		out = append(out, f)
		walk = rest
	}
	return out, ""
}

// psPidMaxColumns are the columns procps sizes to the longest possible
// pid (CF_PIDMAX).
var psPidMaxColumns = map[string]bool{"pid": true, "ppid": true, "pgid": true, "pgrp": true,
	"sess": true, "session": true, "sid": true, "tpgid": true}

// psPidLength is procps_pid_length: the digits of
// /proc/sys/kernel/pid_max, 5 when it cannot be read.
func psPidLength() int {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil || len(b) == 0 {
		return 5
	}
	return len(strings.TrimSuffix(string(b), "\n"))
}

// psScreenCols is procps's active_cols: the terminal's width (or
// OUTBUF_SIZE when stdout is not a terminal), $COLUMNS if set, widened by
// whole screens until the columns' total width fits.
func psScreenCols(fields []psField) int {
	cols := 80
	for _, fd := range []int{1, 2, 0} {
		if rows, c, err := termSize(fd); err == nil && rows > 0 && c > 0 {
			cols = c
			break
		}
	}
	if _, _, err := termSize(1); err != nil {
		cols = psOutbufSize
	}
	if v := os.Getenv("COLUMNS"); v != "" {
		if n, err := strconv.ParseInt(v, 0, 64); err == nil && n > 0 && n < psOutbufSize {
			cols = int(n)
		}
	}
	total, normal := 0, 0
	for i, f := range fields {
		if f.just == justUnlimited && i == len(fields)-1 {
			total += 3
		} else {
			total += f.width
		}
		total += normal
		normal = 1
	}
	active := cols
	for i := 1; ; i++ {
		active = cols * i
		if active >= total || cols*i >= psOutbufSize/2 {
			break
		}
	}
	return active
}

// psLine writes one line, the header when p is nil, as procps's
// show_one_proc lays it out: correct is where the line should be,
// actual where it is; a column's padding makes up the difference.
func psLine(w *bufio.Writer, c *psCtx, p *psProc, fields []psField, activeCols int) {
	correct, actual, dospace := 0, 0, 0
	for i, f := range fields {
		last := i == len(fields)-1
		maxRight, tmpspace := f.width, 0
		if last {
			tmpspace = correct - actual
			if tmpspace < 1 {
				tmpspace = dospace
				maxRight = activeCols - actual - tmpspace
			} else {
				maxRight = activeCols - max(correct, actual)
			}
		}
		maxRight = min(max(maxRight, 0), psOutbufSize-1)
		var text string
		if p != nil {
			text = f.pr(c, p, maxRight)
		} else {
			text = f.header
		}
		amount := psCells(text)
		leftpad := 0
		switch f.just {
		case justRight:
			leftpad = max(f.width-amount, 0)
		case justUnlimited:
			if activeCols-actual-tmpspace < 1 && len(text) > 1 {
				text = text[:1]
			}
		}
		space := correct - actual + leftpad
		if space < 1 {
			space = dospace
		}
		space = min(space, psSpaceMax)
		w.WriteString(strings.Repeat(" ", space))
		w.WriteString(text)
		if last {
			w.WriteByte('\n')
			return
		}
		actual += space + amount
		correct += f.width + 1
		dospace = 1
	}
}

// psCells is a text's width on screen.
func psCells(s string) int {
	n := 0
	for _, r := range s {
		n += runeCells(r)
	}
	return n
}

func runeCells(r rune) int {
	switch {
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == 0x200b:
		return 0
	case r >= 0x1100 && (r <= 0x115f || r == 0x2329 || r == 0x232a ||
		r >= 0x2e80 && r <= 0xa4cf && r != 0x303f || r >= 0xac00 && r <= 0xd7a3 ||
		r >= 0xf900 && r <= 0xfaff || r >= 0xfe30 && r <= 0xfe6f || r >= 0xff00 && r <= 0xff60 ||
		r >= 0xffe0 && r <= 0xffe6 || r >= 0x1f300 && r <= 0x1f64f || r >= 0x1f900 && r <= 0x1f9ff ||
		r >= 0x20000 && r <= 0x3fffd):
		return 2
	}
	return 1
}

// psEscape is procps's escape_str in a UTF-8 locale: control
// characters, invalid bytes and unprintable characters become '?', and
// the text is cut to room cells.
func psEscape(s string, room int) string {
	var b strings.Builder
	cells := 0
	for len(s) > 0 && cells < room {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n <= 1, n == 1 && (r < 0x20 || r == 0x7f), n > 1 && !unicode.IsPrint(r) && !unicode.Is(unicode.Mn, r):
			b.WriteByte('?')
			cells++
		default:
			wc := runeCells(r)
			if n > 1 && wc > room-cells {
				return b.String()
			}
			b.WriteString(s[:n])
			cells += wc
		}
		s = s[n:]
	}
	return b.String()
}

// psArgsText is what procps shows as a process's command line: its
// arguments joined by spaces, or "[comm]" when it has none (a kernel
// thread, a zombie: then " <defunct>" follows).
func psArgsText(p *psProc) string {
	if p.cmdline != "" {
		return p.cmdline
	}
	if p.state == 'Z' {
		return "[" + p.comm + "] <defunct>"
	}
	return "[" + p.comm + "]"
}

// psCmdline is procps's read_unvectored: /proc/<pid>/cmdline with its
// trailing NULs dropped, the NULs and newlines between arguments made
// spaces, and a final newline dropped.
func psCmdline(b []byte) string {
	n := len(b)
	i := n
	for i > 0 && b[i-1] == 0 {
		i--
	}
	out := []byte(string(b[:i]))
	for k := range out {
		if out[k] == '\n' || out[k] == 0 {
			out[k] = ' '
		}
	}
	if i == n && i > 0 && b[n-1] == '\n' {
		out = out[:i-1]
	}
	return string(out)
}

func prArgs(_ *psCtx, p *psProc, room int) string { return psEscape(psArgsText(p), room) }

func prComm(c *psCtx, p *psProc, room int) string {
	if c.unixF {
		return psEscape(psArgsText(p), room)
	}
	return psEscape(p.comm, room)
}

func prUID(_ *psCtx, p *psProc, _ int) string { return strconv.FormatUint(uint64(p.euid), 10) }

// prUser is procps's do_pr_name: the name, cut to the column with a '+'
// when longer, or the number when there is no name.
func prUser(c *psCtx, p *psProc, room int) string {
	name, ok := c.users[p.euid]
	if !ok {
		return strconv.FormatUint(uint64(p.euid), 10)
	}
	name = psEscape(name, psOutbufSize)
	if psCells(name) <= room {
		return name
	}
	if room >= 1 && name[room-1] < 127 {
		return name[:room-1] + "+"
	}
	return strconv.FormatUint(uint64(p.euid), 10)
}

func prStat(_ *psCtx, p *psProc, _ int) string {
	b := []byte{p.state}
	if p.nice < 0 {
		b = append(b, '<')
	}
	if p.nice > 0 {
		b = append(b, 'N')
	}
	if p.vmLckKB > 0 {
		b = append(b, 'L')
	}
	if p.sid == p.pid {
		b = append(b, 's')
	}
	if p.nlwp > 1 {
		b = append(b, 'l')
	}
	if p.pgid == p.tpgid {
		b = append(b, '+')
	}
	return string(b)
}

// prTTY names the controlling terminal from its device number: the
// pseudo-terminals (majors 136 to 143) are pts/N.
func prTTY(_ *psCtx, p *psProc, _ int) string {
	if p.tty == 0 {
		return "?"
	}
	major := p.tty >> 8 & 0xfff
	minor := p.tty&0xff | p.tty>>12&0xfff00
	if major >= 136 && major <= 143 {
		return "pts/" + strconv.Itoa(minor+(major-136)*256)
	}
	return "?"
}

func prTime(_ *psCtx, p *psProc, _ int) string {
	t := (p.utime + p.stime) / psHertz
	ss, mm, hh, dd := t%60, t/60%60, t/3600%24, t/86400
	s := fmt.Sprintf("%02d:%02d:%02d", hh, mm, ss)
	if dd > 0 {
		s = fmt.Sprintf("%d-", dd) + s
	}
	return s
}

func prBsdtime(_ *psCtx, p *psProc, _ int) string {
	u := (p.utime + p.stime) / psHertz
	return fmt.Sprintf("%3d:%02d", u/60, u%60)
}

// elapsed is procps's TIME_ELAPSED: seconds since the process started,
// computed as procps does (the uptime truncated to whole ticks first) so
// that %CPU rounds alike.
func (c *psCtx) elapsed(p *psProc) float64 {
	bootTics := uint64(c.uptime * psHertz)
	if bootTics <= p.start {
		return 0
	}
	return float64(bootTics-p.start) / psHertz
}

func prEtime(c *psCtx, p *psProc, _ int) string {
	t := uint64(c.elapsed(p))
	ss, mm, hh, dd := t%60, t/60%60, t/3600%24, t/86400
	var s string
	if dd > 0 {
		s = fmt.Sprintf("%d-", dd)
	}
	if dd > 0 || hh > 0 {
		s += fmt.Sprintf("%02d:", hh)
	}
	return s + fmt.Sprintf("%02d:%02d", mm, ss)
}

func prEtimes(c *psCtx, p *psProc, _ int) string {
	return strconv.FormatUint(uint64(c.elapsed(p)), 10)
}

// cpuPermille is the process's CPU use over its life, in tenths of a
// percent.
func (c *psCtx) cpuPermille(p *psProc, scale uint64) uint64 {
	jiffies := uint64(c.elapsed(p) * psHertz)
	if jiffies == 0 {
		return 0
	}
	return (p.utime + p.stime) * scale / jiffies
}

func prPcpu(c *psCtx, p *psProc, _ int) string {
	pc := c.cpuPermille(p, 1000)
	if pc > 999 {
		return strconv.FormatUint(pc/10, 10)
	}
	return fmt.Sprintf("%d.%d", pc/10, pc%10)
}

func prC(c *psCtx, p *psProc, _ int) string {
	return fmt.Sprintf("%2d", min(c.cpuPermille(p, 100), 99))
}

func prPmem(c *psCtx, p *psProc, _ int) string {
	var pm uint64
	if c.memTotalKB > 0 {
		pm = min(p.vmRSSKB*1000/c.memTotalKB, 999)
	}
	return fmt.Sprintf("%2d.%d", pm/10, pm%10)
}

func prVsz(_ *psCtx, p *psProc, _ int) string { return strconv.FormatUint(p.vmSizeKB, 10) }

// prNice is the nice value, or "-" for a process outside the normal and
// batch scheduling classes, whose nice value means nothing.
func prNice(_ *psCtx, p *psProc, _ int) string {
	if p.policy != 0 && p.policy != 3 && p.policy != -1 {
		return "-"
	}
	return strconv.Itoa(p.nice)
}

func (c *psCtx) started(p *psProc) time.Time {
	return c.boot.Add(time.Duration(p.start/psHertz) * time.Second)
}

// prStime is procps's STIME: the start time of day, or the date when it
// was not today, or the year when it was not this year.
func prStime(c *psCtx, p *psProc, _ int) string {
	t, now := c.started(p).Local(), c.now.Local()
	switch {
	case t.Year() != now.Year():
		return t.Format("2006")
	case t.YearDay() != now.YearDay():
		return t.Format("Jan02")
	}
	return t.Format("15:04")
}

func prStart(c *psCtx, p *psProc, _ int) string {
	t := c.started(p)
	if t.Unix()+86400 > c.now.Unix() {
		return t.Local().Format("15:04:05")
	}
	return "  " + t.Local().Format("Jan 02")
}

func prLstart(c *psCtx, p *psProc, _ int) string {
	return c.started(p).Local().Format("Mon Jan _2 15:04:05 2006")
}

// psWanted is procps's selection: -e or BSD ax take every process; a
// process on any selection list (-p, -C, -u, ...) is taken; without lists
// (or with BSD a or x), the processes of our effective user on our
// terminal (with BSD options: a, any user's with a terminal; x, ours with
// or without one).
func psWanted(o psOptions, p, self *psProc) bool {
	if o.all {
		return true
	}
	for _, l := range o.lists {
		if l.matches(p) {
			return true
		}
	}
	if len(o.lists) > 0 && !o.bsdA && !o.bsdX {
		return false
	}
	ours := p.euid == self.euid
	hasTTY := p.tty != 0
	onOurTTY := p.tty == self.tty
	switch {
	case !o.bsd:
		return ours && onOurTTY
	case o.bsdA:
		return hasTTY
	case o.bsdX:
		return ours
	}
	return ours && hasTTY
}

// psContext reads the clock, boot time, memory size and user names, and
// ps's own process.
func psContext() (*psCtx, *psProc, error) {
	c := &psCtx{now: time.Now(), users: psUsers()}
	if b, err := os.ReadFile("/proc/uptime"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			c.uptime, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	c.boot = c.now.Add(-time.Duration(c.uptime * float64(time.Second)))
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "btime "); ok {
				if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					c.boot = time.Unix(n, 0)
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				c.memTotalKB, _ = strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			}
		}
	}
	self, err := psRead("self")
	if err != nil {
		return nil, nil, fmt.Errorf("reading /proc/self: %w", err)
	}
	return c, self, nil
}

// psUsers maps user IDs to names from /etc/passwd.
func psUsers() map[uint32]string {
	users := map[uint32]string{}
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return users
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 3 {
			continue
		}
		if id, err := strconv.ParseUint(f[2], 10, 32); err == nil {
			if _, dup := users[uint32(id)]; !dup {
				users[uint32(id)] = f[0]
			}
		}
	}
	return users
}

// psReadAll reads every process in /proc, by ascending pid.
func psReadAll() []*psProc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > 0 {
			pids = append(pids, n)
		}
	}
	slices.Sort(pids)
	var out []*psProc
	for _, pid := range pids {
		// A process may end between the listing and the reads.
		if p, err := psRead(strconv.Itoa(pid)); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// psRead reads one process's stat, status and cmdline.
func psRead(dir string) (*psProc, error) {
	b, err := os.ReadFile("/proc/" + dir + "/stat")
	if err != nil {
		return nil, err
	}
	p, err := parsePsStat(string(b))
	if err != nil {
		return nil, err
	}
	if b, err := os.ReadFile("/proc/" + dir + "/status"); err == nil {
		parsePsStatus(p, string(b))
	}
	if b, err := os.ReadFile("/proc/" + dir + "/cmdline"); err == nil {
		p.cmdline = psCmdline(b)
	}
	return p, nil
}

// parsePsStat parses /proc/<pid>/stat: the command name is what lies
// between the first '(' and the last ')', as it may hold either.
func parsePsStat(s string) (*psProc, error) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return nil, fmt.Errorf("malformed stat %.40q", s)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return nil, fmt.Errorf("malformed stat pid: %w", err)
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 22 || len(f[0]) != 1 {
		return nil, fmt.Errorf("malformed stat %.40q", s)
	}
	num := func(i int) int64 {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		return n
	}
	unum := func(i int) uint64 {
		n, _ := strconv.ParseUint(f[i], 10, 64)
		return n
	}
	p := &psProc{
		pid: pid, comm: s[open+1 : end], state: f[0][0],
		ppid: int(num(1)), pgid: int(num(2)), sid: int(num(3)), tty: int(num(4)), tpgid: int(num(5)),
		utime: unum(11), stime: unum(12), nice: int(num(16)), nlwp: int(num(17)), start: unum(19),
		vmSizeKB: unum(20) / 1024, vmRSSKB: unum(21) * 4,
	}
	if len(f) > 38 {
		p.policy = int(num(38))
	}
	return p, nil
}

// parsePsStatus takes the effective user ID and the memory figures from
// /proc/<pid>/status.
func parsePsStatus(p *psProc, s string) {
	for _, line := range strings.Split(s, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		if len(f) == 0 {
			continue
		}
		kb := func() uint64 {
			n, _ := strconv.ParseUint(f[0], 10, 64)
			return n
		}
		switch key {
		case "Uid":
			if len(f) >= 2 {
				if n, err := strconv.ParseUint(f[0], 10, 32); err == nil {
					p.ruid = uint32(n)
				}
				if n, err := strconv.ParseUint(f[1], 10, 32); err == nil {
					p.euid = uint32(n)
				}
			}
		case "VmSize":
			p.vmSizeKB = kb()
		case "VmRSS":
			p.vmRSSKB = kb()
		case "VmLck":
			p.vmLckKB = kb()
		}
	}
}
