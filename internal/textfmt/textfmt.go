// Package textfmt formats what secexec tells its user about host-side
// work (set-up progress, the output of a failed npm) so that it stays
// short: sizes in human units, a child's output cut to one line.
package textfmt

import (
	"fmt"
	"strings"
)

// Bytes formats n as "512 bytes", "412 KB" or "3.1 MB".
func Bytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// LastLines returns the last n non-empty lines of s, trimmed and joined
// by "; ", so that a program's output fits in a one-line error.
func LastLines(s string, n int) string {
	var lines []string
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}
