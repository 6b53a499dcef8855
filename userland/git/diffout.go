package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// diffFormat is which of git's diff outputs to write for a set of
// changes (--patch, --stat, --shortstat, --numstat, --name-only,
// --name-status); several may be asked for at once.
type diffFormat struct {
	patch, stat, shortstat, numstat, nameOnly, nameStatus bool
	noRenames                                             bool   // --no-renames: no rename pairing
	filter                                                string // --diff-filter: status letters to keep (upper) or drop (lower)
}

func (f diffFormat) any() bool {
	return f.patch || f.stat || f.shortstat || f.numstat || f.nameOnly || f.nameStatus
}

// flag sets the format a diff option names, and says whether it was one.
func (f *diffFormat) flag(a string) bool {
	switch a {
	case "-p", "-u", "--patch":
		f.patch = true
	case "--stat":
		f.stat = true
	case "--shortstat":
		f.shortstat = true
	case "--numstat":
		f.numstat = true
	case "--name-only":
		f.nameOnly = true
	case "--name-status":
		f.nameStatus = true
	case "-W", "--function-context":
		return false
	case "-s", "--no-patch":
		*f = diffFormat{noRenames: f.noRenames}
	case "--no-renames":
		f.noRenames = true
	case "-M", "--find-renames":
		f.noRenames = false
	case "--no-prefix":
		srcPrefix, dstPrefix = "", ""
	default:
		if v, ok := strings.CutPrefix(a, "--src-prefix="); ok {
			srcPrefix = v
			return true
		}
		if v, ok := strings.CutPrefix(a, "--dst-prefix="); ok {
			dstPrefix = v
			return true
		}
		if v, ok := strings.CutPrefix(a, "--diff-filter="); ok {
			f.filter = v
			return true
		}
		if n, ok := strings.CutPrefix(a, "--unified="); ok {
			return setContext(n, f)
		}
		if n, ok := strings.CutPrefix(a, "-U"); ok && n != "" {
			return setContext(n, f)
		}
		return false
	}
	return true
}

// setContext is -U<n>: it sets the context lines, and asks for a patch.
func setContext(n string, f *diffFormat) bool {
	v, err := strconv.Atoi(n)
	if err != nil || v < 0 {
		return false
	}
	context = min(v, 1<<20)
	f.patch = true
	return true
}

// fileStat is one file's line counts (bytes, for a binary file).
type fileStat struct {
	path         string
	added, del   int
	binary       bool
	unmerged     bool // git's "Unmerged" line
	oldSz, newSz int
}

func statOf(c fileChange) (fileStat, error) {
	s := fileStat{path: quotePath(c.path)}
	if c.unmerged {
		s.unmerged = true
		return s, nil
	}
	if c.oldPath != "" {
		s.path = renameName(c.oldPath, c.path)
	}
	var a, b []byte
	var err error
	if c.from != nil {
		if a, err = c.from.load(); err != nil {
			return s, err
		}
	}
	if c.to != nil {
		if b, err = c.to.load(); err != nil {
			return s, err
		}
	}
	if isBinary(a) || isBinary(b) {
		s.binary, s.oldSz, s.newSz = true, len(a), len(b)
		return s, nil
	}
	if c.from != nil && c.to != nil && c.from.hash.Equal(c.to.hash) {
		return s, nil
	}
	for _, o := range lineOps(string(a), string(b)) {
		switch o.kind {
		case '+':
			s.added++
		case '-':
			s.del++
		}
	}
	return s, nil
}

// srcPrefix and dstPrefix name the two sides in patch headers: "a/" and
// "b/", swapped by -R, changed by --src-prefix, --dst-prefix and
// --no-prefix.
var srcPrefix, dstPrefix = "a/", "b/"

// statWidth is the width git's --stat fills when its output is not a
// terminal.
const statWidth = 80

// writeDiff writes changes in the formats f asks for, in git's order:
// the raw-ish name lists, then the stat, the summary, and the patch.
func writeDiff(w io.Writer, f diffFormat, changes []fileChange) error {
	if !f.noRenames {
		changes = detectRenames(changes)
	}
	if f.filter != "" {
		changes = filterStatus(changes, f.filter)
	}
	if f.nameOnly {
		for _, c := range changes {
			fmt.Fprintln(w, quotePath(c.path))
		}
	}
	if f.nameStatus {
		for _, c := range changes {
			if c.unmerged {
				fmt.Fprintf(w, "U\t%s\n", quotePath(c.path))
				continue
			}
			if c.oldPath != "" {
				fmt.Fprintf(w, "R%03d\t%s\t%s\n", c.score*100/maxScore, quotePath(c.oldPath), quotePath(c.path))
				continue
			}
			code := "M"
			switch {
			case c.from == nil:
				code = "A"
			case c.to == nil:
				code = "D"
			case c.from.mode.IsFile() != c.to.mode.IsFile() || (c.from.mode == 0o120000) != (c.to.mode == 0o120000):
				code = "T"
			}
			fmt.Fprintf(w, "%s\t%s\n", code, quotePath(c.path))
		}
	}
	var stats []fileStat
	if f.stat || f.shortstat || f.numstat {
		for _, c := range changes {
			s, err := statOf(c)
			if err != nil {
				return err
			}
			stats = append(stats, s)
		}
	}
	if f.numstat {
		for _, s := range stats {
			if s.unmerged {
				fmt.Fprintf(w, "0\t0\t%s\n", s.path)
			} else if s.binary {
				fmt.Fprintf(w, "-\t-\t%s\n", s.path)
			} else {
				fmt.Fprintf(w, "%d\t%d\t%s\n", s.added, s.del, s.path)
			}
		}
	}
	if f.stat {
		writeStat(w, stats)
	} else if f.shortstat {
		writeStatSummary(w, stats)
	}
	if f.patch {
		if (f.stat || f.shortstat || f.numstat) && len(changes) > 0 {
			fmt.Fprintln(w)
		}
		for _, c := range changes {
			if err := writePatch(w, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// scaleLinear is git's scale_linear.
func scaleLinear(it, width, maxChange int) int {
	if it == 0 || maxChange == 0 {
		return 0
	}
	return 1 + it*(width-1)/maxChange
}

// writeStat is git's show_stats for an 80-column output.
func writeStat(w io.Writer, stats []fileStat) {
	if len(stats) == 0 {
		return
	}
	maxLen, maxChange, numberWidth, binWidth := 0, 0, 0, 0
	for _, s := range stats {
		maxLen = max(maxLen, utf8.RuneCountInString(s.path))
		if s.unmerged {
			continue
		}
		if s.binary {
			binWidth = max(binWidth, 14+len(strconv.Itoa(s.newSz))+len(strconv.Itoa(s.oldSz)))
			numberWidth = 3
			continue
		}
		maxChange = max(maxChange, s.added+s.del)
	}
	numberWidth = max(numberWidth, len(strconv.Itoa(maxChange)))
	width := max(statWidth, 16+6+numberWidth)
	graphWidth := maxChange
	if maxChange+4 <= binWidth {
		graphWidth = binWidth - 4
	}
	nameWidth := maxLen
	if nameWidth+numberWidth+6+graphWidth > width {
		if graphWidth > width*3/8-numberWidth-6 {
			graphWidth = max(width*3/8-numberWidth-6, 6)
		}
		if nameWidth > width-numberWidth-6-graphWidth {
			nameWidth = width - numberWidth - 6 - graphWidth
		} else {
			graphWidth = width - numberWidth - 6 - nameWidth
		}
	}
	for _, s := range stats {
		name, prefix := s.path, ""
		l := nameWidth
		if runes := []rune(name); nameWidth < len(runes) {
			prefix = "..."
			l = max(l-3, 0)
			name = string(runes[len(runes)-l:])
			if i := strings.IndexByte(name, '/'); i >= 0 {
				name = name[i:]
			}
		}
		padding := max(l-utf8.RuneCountInString(name), 0)
		if s.unmerged {
			// git 2.39 ends this line without a newline.
			fmt.Fprintf(w, " %s%s%s | Unmerged", prefix, name, strings.Repeat(" ", padding))
			continue
		}
		if s.binary {
			fmt.Fprintf(w, " %s%s%s | Bin", prefix, name, strings.Repeat(" ", padding))
			if s.oldSz == 0 && s.newSz == 0 {
				fmt.Fprintln(w)
				continue
			}
			fmt.Fprintf(w, " %d -> %d bytes\n", s.oldSz, s.newSz)
			continue
		}
		add, del := s.added, s.del
		if graphWidth <= maxChange {
			total := scaleLinear(add+del, graphWidth, maxChange)
			if total < 2 && add > 0 && del > 0 {
				total = 2
			}
			if add < del {
				add = scaleLinear(add, graphWidth, maxChange)
				del = total - add
			} else {
				del = scaleLinear(del, graphWidth, maxChange)
				add = total - del
			}
		}
		sep := ""
		if s.added+s.del > 0 {
			sep = " "
		}
		fmt.Fprintf(w, " %s%s%*s | %*d%s%s%s\n", prefix, name, padding, "", numberWidth, s.added+s.del, sep,
			strings.Repeat("+", add), strings.Repeat("-", del))
	}
	writeStatSummary(w, stats)
}

// writeStatSummary is git's " N files changed, ..." line.
func writeStatSummary(w io.Writer, stats []fileStat) {
	if len(stats) == 0 {
		return
	}
	ins, del, files := 0, 0, 0
	for _, s := range stats {
		if s.unmerged {
			continue
		}
		files++
		if !s.binary {
			ins += s.added
			del += s.del
		}
	}
	if files == 0 {
		// Only unmerged entries: git's print_stat_summary for none.
		fmt.Fprintln(w, " 0 files changed")
		return
	}
	writeStatTotals(w, files, ins, del)
}

// writeStatTotals writes the " N files changed, ..." line from its
// counts.
func writeStatTotals(w io.Writer, files, ins, del int) {
	line := fmt.Sprintf(" %d %s changed", files, plural(files, "file", "files"))
	if ins > 0 || del == 0 {
		line += fmt.Sprintf(", %d %s(+)", ins, plural(ins, "insertion", "insertions"))
	}
	if del > 0 || ins == 0 {
		line += fmt.Sprintf(", %d %s(-)", del, plural(del, "deletion", "deletions"))
	}
	fmt.Fprintln(w, line)
}

// statChanges is the fileStat of each change.
func statChanges(changes []fileChange) ([]fileStat, error) {
	var out []fileStat
	for _, c := range changes {
		s, err := statOf(c)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// writeChangeSummary is git's --summary: created and deleted files,
// renames with their similarity, mode changes.
func writeChangeSummary(w io.Writer, changes []fileChange) {
	for _, ch := range changes {
		switch {
		case ch.oldPath != "":
			fmt.Fprintf(w, " rename %s (%d%%)\n", renameName(ch.oldPath, ch.path), ch.score*100/maxScore)
			if ch.from.mode != ch.to.mode {
				fmt.Fprintf(w, " mode change %o => %o\n", ch.from.mode, ch.to.mode)
			}
		case ch.from == nil:
			fmt.Fprintf(w, " create mode %o %s\n", ch.to.mode, quotePath(ch.path))
		case ch.to == nil:
			fmt.Fprintf(w, " delete mode %o %s\n", ch.from.mode, quotePath(ch.path))
		case ch.from.mode != ch.to.mode:
			fmt.Fprintf(w, " mode change %o => %o %s\n", ch.from.mode, ch.to.mode, quotePath(ch.path))
		}
	}
}

// statusLetter is a change's letter in --name-status and --diff-filter.
func statusLetter(c fileChange) byte {
	switch {
	case c.unmerged:
		return 'U'
	case c.oldPath != "":
		return 'R'
	case c.from == nil:
		return 'A'
	case c.to == nil:
		return 'D'
	case c.from.mode.IsFile() != c.to.mode.IsFile() || (c.from.mode == 0o120000) != (c.to.mode == 0o120000):
		return 'T'
	}
	return 'M'
}

// filterStatus is --diff-filter: upper-case letters select, lower-case
// ones exclude.
func filterStatus(changes []fileChange, filter string) []fileChange {
	include := strings.ToUpper(strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r
		}
		return -1
	}, filter))
	exclude := strings.ToUpper(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r
		}
		return -1
	}, filter))
	var keep []fileChange
	for _, c := range changes {
		l := string(statusLetter(c))
		if (include == "" || strings.Contains(include, l)) && !strings.Contains(exclude, l) {
			keep = append(keep, c)
		}
	}
	return keep
}
