package main

import (
	"fmt"
	"io"
	"strings"
)

// fileStat is one line of a diffstat.
type fileStat struct {
	name          string
	added, delete int
	binary        bool
	oldSize, size int
}

// statChanges counts the lines each change adds and deletes.
func statChanges(changes []fileChange) ([]fileStat, error) {
	var out []fileStat
	for _, ch := range changes {
		var x, y []byte
		var err error
		if ch.from != nil {
			if x, err = ch.from.load(); err != nil {
				return nil, err
			}
		}
		if ch.to != nil {
			if y, err = ch.to.load(); err != nil {
				return nil, err
			}
		}
		fs := fileStat{name: ch.path, oldSize: len(x), size: len(y)}
		if isBinary(x) || isBinary(y) {
			fs.binary = true
		} else {
			for _, o := range lineOps(string(x), string(y)) {
				switch o.kind {
				case '+':
					fs.added++
				case '-':
					fs.delete++
				}
			}
		}
		out = append(out, fs)
	}
	return out, nil
}

func decimalWidth(n int) int {
	w := 1
	for ; n >= 10; n /= 10 {
		w++
	}
	return w
}

// scaleLinear is git's scale_linear for the +/- graph.
func scaleLinear(it, width, maxChange int) int {
	if it == 0 {
		return 0
	}
	return 1 + it*(width-1)/maxChange
}

// writeDiffstat writes git's --stat for an 80-column output (git's width
// when not on a terminal), then the summary line.
func writeDiffstat(w io.Writer, stats []fileStat) {
	const width = 80
	maxLen, maxChange, numberWidth, binWidth := 0, 0, 0, 0
	for _, s := range stats {
		maxLen = max(maxLen, len(s.name))
		if s.binary {
			numberWidth = max(numberWidth, 3)
			binWidth = max(binWidth, len(fmt.Sprintf("Bin %d -> %d bytes", s.oldSize, s.size)))
			continue
		}
		maxChange = max(maxChange, s.added+s.delete)
	}
	numberWidth = max(numberWidth, decimalWidth(maxChange))
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
	adds, dels := 0, 0
	for _, s := range stats {
		name := s.name
		if len(name) > nameWidth {
			// git keeps the end of a long name, after "...".
			name = "..." + name[len(name)-(nameWidth-3):]
		}
		if s.binary {
			fmt.Fprintf(w, " %-*s | %*s %d -> %d bytes\n", nameWidth, name, numberWidth, "Bin", s.oldSize, s.size)
			continue
		}
		adds += s.added
		dels += s.delete
		add, del := s.added, s.delete
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
		if s.added+s.delete > 0 {
			sep = " "
		}
		fmt.Fprintf(w, " %-*s | %*d%s%s%s\n", nameWidth, name, numberWidth, s.added+s.delete, sep, strings.Repeat("+", add), strings.Repeat("-", del))
	}
	writeStatSummary(w, len(stats), adds, dels)
}

// writeStatSummary is the "N files changed, ..." line.
func writeStatSummary(w io.Writer, files, adds, dels int) {
	line := fmt.Sprintf(" %d %s changed", files, plural(files, "file", "files"))
	if adds > 0 || dels == 0 {
		line += fmt.Sprintf(", %d %s(+)", adds, plural(adds, "insertion", "insertions"))
	}
	if dels > 0 || adds == 0 {
		line += fmt.Sprintf(", %d %s(-)", dels, plural(dels, "deletion", "deletions"))
	}
	fmt.Fprintln(w, line)
}

// writeCreateDelete writes the "create mode" / "delete mode" summary.
func writeCreateDelete(w io.Writer, changes []fileChange) {
	for _, ch := range changes {
		switch {
		case ch.from == nil:
			fmt.Fprintf(w, " create mode %o %s\n", ch.to.mode, ch.path)
		case ch.to == nil:
			fmt.Fprintf(w, " delete mode %o %s\n", ch.from.mode, ch.path)
		case ch.from.mode != ch.to.mode:
			fmt.Fprintf(w, " mode change %o => %o %s\n", ch.from.mode, ch.to.mode, ch.path)
		}
	}
}
