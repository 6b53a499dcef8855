package main

import (
	"bytes"
	"io"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// graph draws git log --graph's left margin for linear histories and
// simple merges (two-parent merges of branches that fork and rejoin):
// a column per line of history, "*" for the commit, "|\" after a merge
// and "|/" where two columns meet again. Octopus merges and crossing
// lines are drawn in the same style but not always as git draws them.
type graph struct {
	firstParent bool // --first-parent: a merge draws as its first parent's child only
	cols        []plumbing.Hash
	width       int      // the current commit's margin width
	pending     []string // margins still to show after the commit line
}

func newGraph([]*object.Commit) *graph { return &graph{} }

func (g *graph) column(h plumbing.Hash) int {
	for i, c := range g.cols {
		if c == h {
			return i
		}
	}
	return -1
}

// margin pads a margin to the commit's width.
func (g *graph) margin(s string) string {
	if len(s) < g.width {
		s += strings.Repeat(" ", g.width-len(s))
	}
	return s
}

// padding is the margin of a line after the commit's own lines.
func (g *graph) padding() string {
	return g.margin(strings.Repeat("| ", len(g.cols)))
}

// separator is the margin of the blank line before commit c.
func (g *graph) separator(c *object.Commit) string {
	var b strings.Builder
	found := false
	for _, h := range g.cols {
		if h == c.Hash {
			b.WriteString("|" + strings.Repeat(" ", 1+2*(max(len(g.parents(c)), 1)-1)))
			found = true
		} else {
			b.WriteString("| ")
		}
	}
	if !found {
		b.WriteString("| ")
	}
	return b.String()
}

// parents are the parents the graph draws.
func (g *graph) parents(c *object.Commit) []plumbing.Hash {
	if g.firstParent && len(c.ParentHashes) > 1 {
		return c.ParentHashes[:1]
	}
	return c.ParentHashes
}

// update moves to commit c and returns its commit-line margin.
func (g *graph) update(c *object.Commit) string {
	ci := g.column(c.Hash)
	if ci < 0 {
		g.cols = append(g.cols, c.Hash)
		ci = len(g.cols) - 1
	}
	parents := g.parents(c)
	np := len(parents)
	var line strings.Builder
	for i := range g.cols {
		if i == ci {
			line.WriteString("* " + strings.Repeat("  ", max(np-1, 0)))
		} else {
			line.WriteString("| ")
		}
	}
	g.width = line.Len()
	g.pending = nil
	// The commit's column now waits for its first parent; other
	// parents get new columns right after it.
	var next []plumbing.Hash
	next = append(next, g.cols[:ci]...)
	added := 0
	for _, p := range parents {
		if p == c.Hash || g.column(p) >= 0 && g.column(p) != ci && added > 0 {
			continue
		}
		next = append(next, p)
		added++
	}
	next = append(next, g.cols[ci+1:]...)
	if np > 1 {
		g.pending = append(g.pending, g.margin(strings.Repeat("| ", ci)+"|"+strings.Repeat("\\ ", added-1)+strings.Repeat("| ", len(g.cols)-ci-1)))
	}
	// Columns waiting for the same commit join the leftmost one.
	for {
		j := dupColumn(next)
		if j < 0 {
			break
		}
		m := []byte(strings.Repeat(" ", max(g.width, 2*len(next))))
		for k := range next {
			switch {
			case k < j:
				m[2*k] = '|'
			default:
				m[2*k-1] = '/'
			}
		}
		g.pending = append(g.pending, g.margin(strings.TrimRight(string(m), " ")))
		next = append(next[:j], next[j+1:]...)
	}
	g.cols = next
	return g.margin(line.String())
}

func dupColumn(cols []plumbing.Hash) int {
	for j := range cols {
		for i := range j {
			if cols[i] == cols[j] {
				return j
			}
		}
	}
	return -1
}

// entry is one log entry split for the graph: an optional separator
// line before it, the header (whose first line is the commit line), an
// optional padding line for a newline-terminated entry, and the diff.
type graphEntry struct {
	separator  bool
	header     string
	terminator bool // a padding line ends the header (a tformat ending in a newline)
	diff       []byte
}

// write draws one entry.
func (g *graph) write(w io.Writer, c *object.Commit, e graphEntry) error {
	var b bytes.Buffer
	if e.separator {
		b.WriteString(g.separator(c) + "\n")
	}
	commitLine := g.update(c)
	header := e.header
	endsNL := strings.HasSuffix(header, "\n")
	header = strings.TrimSuffix(header, "\n")
	for i, l := range strings.Split(header, "\n") {
		if i == 0 {
			b.WriteString(commitLine)
		} else {
			b.WriteString(g.nextMargin())
		}
		b.WriteString(l + "\n")
	}
	for len(g.pending) > 0 {
		b.WriteString(g.nextMargin() + "\n")
	}
	if e.terminator && endsNL {
		b.WriteString(g.padding() + "\n")
	}
	if len(e.diff) > 0 {
		for _, l := range strings.SplitAfter(string(e.diff), "\n") {
			if l != "" {
				b.WriteString(g.padding() + l)
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// nextMargin is the margin of the next line after the commit line.
func (g *graph) nextMargin() string {
	if len(g.pending) > 0 {
		m := g.pending[0]
		g.pending = g.pending[1:]
		return m
	}
	return g.padding()
}
