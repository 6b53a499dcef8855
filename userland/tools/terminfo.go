package main

import (
	"errors"
	"strings"

	"github.com/xo/terminfo"
)

// termEntry is one terminal description, keyed by terminfo capability
// names ("bold", "cols", "am", and extended ones such as "E3"). Absent
// capabilities are simply not in the maps.
type termEntry struct {
	// names is the entry's name field: its names and, last, its
	// description, separated by '|'.
	names string
	bools map[string]bool
	nums  map[string]int
	strs  map[string]string
}

// longname is the description: the last of the names, as ncurses's
// longname() returns it.
func (e *termEntry) longname() string {
	if i := strings.LastIndexByte(e.names, '|'); i >= 0 {
		return e.names[i+1:]
	}
	return e.names
}

// Standard capability names, to tell an absent capability (a known name
// the entry lacks: tput exits 1) from an unknown one (exit 4).
var stdBools, stdNums, stdStrs = func() (b, n, s map[string]bool) {
	b, n, s = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i := range terminfo.CapCountBool {
		b[terminfo.BoolCapNameShort(i)] = true
	}
	for i := range terminfo.CapCountNum {
		n[terminfo.NumCapNameShort(i)] = true
	}
	for i := range terminfo.CapCountString {
		s[terminfo.StringCapNameShort(i)] = true
	}
	return b, n, s
}()

// errNoTerm is a terminal name with no description anywhere.
var errNoTerm = errors.New("unknown terminal")

// loadTerm finds name's description: in the terminfo directories the
// way ncurses looks ($TERMINFO, ~/.terminfo, $TERMINFO_DIRS, /etc/terminfo,
// /lib/terminfo, /usr/share/terminfo), else in the built-in table, which
// holds the common terminals for VMs that have no terminfo files.
func loadTerm(name string) (*termEntry, error) {
	if name == "" || strings.Contains(name, "/") || name == "." || name == ".." {
		return nil, errNoTerm
	}
	if ti, err := terminfo.Load(name); err == nil {
		return fromTerminfo(ti), nil
	}
	if e, ok := builtinTerms[name]; ok {
		return e, nil
	}
	for _, e := range builtinTerms {
		names := strings.Split(e.names, "|")
		for _, n := range names[:max(len(names)-1, 1)] {
			if n == name {
				return e, nil
			}
		}
	}
	return nil, errNoTerm
}

// fromTerminfo converts a decoded compiled entry. Cancelled capabilities
// count as absent.
func fromTerminfo(ti *terminfo.Terminfo) *termEntry {
	e := &termEntry{names: strings.Join(ti.Names, "|"), bools: map[string]bool{}, nums: map[string]int{}, strs: map[string]string{}}
	for i, v := range ti.Bools {
		if v && !ti.BoolsM[i] {
			e.bools[terminfo.BoolCapNameShort(i)] = true
		}
	}
	for i, v := range ti.Nums {
		if v >= 0 {
			e.nums[terminfo.NumCapNameShort(i)] = v
		}
	}
	for i, v := range ti.Strings {
		if v != nil {
			e.strs[terminfo.StringCapNameShort(i)] = string(v)
		}
	}
	for i, v := range ti.ExtBools {
		if v {
			e.bools[string(ti.ExtBoolNames[i])] = true
		}
	}
	for i, v := range ti.ExtNums {
		if v >= 0 {
			e.nums[string(ti.ExtNumNames[i])] = v
		}
	}
	for i, v := range ti.ExtStrings {
		if !ti.ExtStringsM[i] {
			e.strs[string(ti.ExtStringNames[i])] = string(v)
		}
	}
	return e
}

// stripPadding removes the delays ("$<5>", "$<2*/>") from a capability's
// value, as tput's putp does (ncurses's screen interface without a
// screen pads nothing, whatever the line's speed). It
// scans as ncurses's tputs does, quirks included: "$<" not followed by a
// digit or '.', or with no '>' after it, is kept; otherwise the digits,
// one '.', '*' and '/' are read and the next byte (normally the '>') is
// dropped with them.
func stripPadding(s string) string {
	if !strings.Contains(s, "$<") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' || i+1 >= len(s) || s[i+1] != '<' {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i + 2
		if j >= len(s) || !(isDigit(s[j]) || s[j] == '.') || !strings.Contains(s[j:], ">") {
			b.WriteString("$<")
			i = j
			continue
		}
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j < len(s) && s[j] == '.' {
			j++
			for j < len(s) && isDigit(s[j]) {
				j++
			}
		}
		for j < len(s) && (s[j] == '*' || s[j] == '/') {
			j++
		}
		i = j + 1
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// padded is ncurses's tputs through its plain (not screen) interface, as
// clear and tput's init and reset use it: every delay becomes as many
// pad characters as the line sends in that time at baud bits per second
// (9 bits a character); none when the output is no terminal (baud 0) or
// the entry has npc. affcnt multiplies the delays marked '*'.
func padded(s string, e *termEntry, baud, affcnt int) string {
	const maxPadding = 1 << 20
	if !strings.Contains(s, "$<") {
		return s
	}
	var pc byte
	if p, ok := e.strs["pad"]; ok && p != "" {
		pc = p[0]
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' || i+1 >= len(s) || s[i+1] != '<' {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i + 2
		if j >= len(s) || !(isDigit(s[j]) || s[j] == '.') || !strings.Contains(s[j:], ">") {
			b.WriteString("$<")
			i = j
			continue
		}
		number := 0
		for j < len(s) && isDigit(s[j]) {
			number = min(number*10+int(s[j]-'0'), 1<<20)
			j++
		}
		number *= 10
		if j < len(s) && s[j] == '.' {
			j++
			if j < len(s) && isDigit(s[j]) {
				number += int(s[j] - '0')
				j++
			}
			for j < len(s) && isDigit(s[j]) {
				j++
			}
		}
		for j < len(s) && (s[j] == '*' || s[j] == '/') {
			if s[j] == '*' {
				number = min(number*affcnt, 1<<24)
			}
			j++
		}
		if number > 0 && !e.bools["npc"] {
			n := (number / 10) * baud / 9000
			// Real delays are milliseconds (a few hundred bytes at
			// 38400 baud); a hostile entry's stop at maxPadding in all.
			n = min(max(n, 0), maxPadding-b.Len())
			b.WriteString(strings.Repeat(string(pc), max(n, 0)))
		}
		i = j + 1
	}
	return b.String()
}
