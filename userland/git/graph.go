package main

import (
	"bytes"
	"io"
	"slices"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// graph draws git log --graph's left margin: a column per line of
// history, "*" for the commit, "\" and "/" where lines part and meet.
// It follows the layout rules of git's graph drawing (a state per line:
// the commit line, the line after a merge, lines collapsing columns
// that wait for the same commit, and padding), so the margins are
// git's, character for character, for the histories the tests cover.
type graph struct {
	shown       map[plumbing.Hash]bool // the commits the log shows: the parents drawn
	firstParent bool

	commit      *object.Commit
	parents     []plumbing.Hash // the commit's parents that are drawn
	cols        []plumbing.Hash // the columns before this commit
	newCols     []plumbing.Hash // the columns after it
	mapping     []int           // screen position -> new column, -1 for none
	oldMapping  []int
	width       int
	commitIndex int
	prevIndex   int
	mergeLayout int
	edgesAdded  int
	prevEdges   int
	state       graphState
	prevState   graphState
	expansion   int  // the pre-commit rows drawn for an octopus merge
	missingNL   bool // the last entry's line is still open (format:)
}

type graphState int

const (
	statePadding graphState = iota
	stateSkip
	statePreCommit
	stateCommit
	statePostMerge
	stateCollapsing
)

func newGraph(shown map[plumbing.Hash]bool, firstParent bool) *graph {
	return &graph{shown: shown, firstParent: firstParent}
}

func (g *graph) setState(s graphState) { g.prevState, g.state = g.state, s }

// drawnParents are c's parents that the log shows.
func (g *graph) drawnParents(c *object.Commit) []plumbing.Hash {
	var out []plumbing.Hash
	for i, p := range c.ParentHashes {
		if g.firstParent && i > 0 {
			break
		}
		if g.shown[p] && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func findColumn(cols []plumbing.Hash, h plumbing.Hash) int {
	for i, c := range cols {
		if c == h {
			return i
		}
	}
	return -1
}

// update moves the graph to commit c.
func (g *graph) update(c *object.Commit) {
	g.commit = c
	g.parents = g.drawnParents(c)
	g.prevIndex = g.commitIndex
	g.updateColumns()
	switch {
	case g.state != statePadding:
		g.state = stateSkip
	case g.needsPreCommit(0):
		g.state = statePreCommit
	default:
		g.state = stateCommit
	}
	g.expansion = 0
}

// insert places a commit in the new columns (once) and records where
// the line at screen position idx (or the next one) goes.
func (g *graph) insert(h plumbing.Hash, idx int) {
	i := findColumn(g.newCols, h)
	if i < 0 {
		i = len(g.newCols)
		g.newCols = append(g.newCols, h)
	}
	var at int
	switch {
	case len(g.parents) > 1 && idx > -1 && g.mergeLayout == -1:
		// The first parent of a merge: lay the merge out by whether
		// that parent is to the left of the merge.
		dist := idx - i
		shift := 1
		if dist > 1 {
			shift = 2*dist - 3
		}
		g.mergeLayout = 1
		if dist > 0 {
			g.mergeLayout = 0
		}
		g.edgesAdded = len(g.parents) + g.mergeLayout - 2
		at = g.width + (g.mergeLayout-1)*shift
		g.width += 2 * g.mergeLayout
	case g.edgesAdded > 0 && g.width >= 2 && i == g.mapping[g.width-2]:
		// A merge's new edge that meets the last column joins it at
		// once.
		at = g.width - 2
		g.edgesAdded = -1
	default:
		at = g.width
		g.width += 2
	}
	if at >= 0 && at < len(g.mapping) {
		g.mapping[at] = i
	}
}

func (g *graph) updateColumns() {
	g.cols, g.newCols = g.newCols, nil
	// The commit line reads where the last collapse left the lines.
	g.oldMapping = g.mapping
	size := 2 * (len(g.cols) + len(g.parents) + 1)
	g.mapping = make([]int, size)
	for i := range g.mapping {
		g.mapping[i] = -1
	}
	g.width = 0
	g.prevEdges, g.edgesAdded = g.edgesAdded, 0
	seen := false
	for i := 0; i <= len(g.cols); i++ {
		var h plumbing.Hash
		if i == len(g.cols) {
			if seen {
				break
			}
			h = g.commit.Hash
		} else {
			h = g.cols[i]
		}
		if h == g.commit.Hash {
			seen = true
			g.commitIndex = i
			g.mergeLayout = -1
			for _, p := range g.parents {
				g.insert(p, i)
			}
			if len(g.parents) == 0 {
				g.width += 2
			}
		} else {
			g.insert(h, -1)
		}
	}
	for len(g.mapping) > 1 && g.mapping[len(g.mapping)-1] < 0 {
		g.mapping = g.mapping[:len(g.mapping)-1]
	}
}

func (g *graph) expansionRows() int { return (len(g.parents) - 2) * 2 }

func (g *graph) needsPreCommit(row int) bool {
	return len(g.parents) >= 3 && g.commitIndex < len(g.cols)-1 && row < g.expansionRows()
}

func (g *graph) mappingCorrect() bool {
	for i, t := range g.mapping {
		if t >= 0 && t != i/2 {
			return false
		}
	}
	return true
}

// line builds one margin.
type line struct{ b strings.Builder }

func (l *line) add(s string) { l.b.WriteString(s) }

func (g *graph) pad(l *line) string {
	s := l.b.String()
	if len(s) < g.width {
		s += strings.Repeat(" ", g.width-len(s))
	}
	return s
}

// next is the margin of the next line, advancing the state.
func (g *graph) next() (margin string, commitLine bool) {
	var l line
	switch g.state {
	case statePadding:
		for range g.newCols {
			l.add("| ")
		}
	case stateSkip:
		l.add("...")
		if g.needsPreCommit(0) {
			g.setState(statePreCommit)
		} else {
			g.setState(stateCommit)
		}
	case statePreCommit:
		g.preCommitLine(&l)
	case stateCommit:
		g.commitLine(&l)
		commitLine = true
	case statePostMerge:
		g.postMergeLine(&l)
	case stateCollapsing:
		g.collapsingLine(&l)
	}
	return g.pad(&l), commitLine
}

func (g *graph) preCommitLine(l *line) {
	seen := false
	for i, h := range g.cols {
		switch {
		case h == g.commit.Hash:
			seen = true
			l.add("|" + strings.Repeat(" ", g.expansion))
		case seen && g.expansion == 0:
			if g.prevState == statePostMerge && g.prevIndex < i {
				l.add("\\")
			} else {
				l.add("|")
			}
		case seen:
			l.add("\\")
		default:
			l.add("|")
		}
		l.add(" ")
	}
	g.expansion++
	if !g.needsPreCommit(g.expansion) {
		g.setState(stateCommit)
	}
}

func (g *graph) commitLine(l *line) {
	seen := false
	for i := 0; i <= len(g.cols); i++ {
		var h plumbing.Hash
		if i == len(g.cols) {
			if seen {
				break
			}
			h = g.commit.Hash
		} else {
			h = g.cols[i]
		}
		switch {
		case h == g.commit.Hash:
			seen = true
			l.add("*")
			if len(g.parents) > 2 {
				g.octopus(l)
			}
		case seen && g.edgesAdded > 1:
			l.add("\\")
		case seen && g.edgesAdded == 1:
			if g.prevState == statePostMerge && g.prevEdges > 0 && g.prevIndex < i {
				l.add("\\")
			} else {
				l.add("|")
			}
		case g.prevState == stateCollapsing && 2*i+1 < len(g.oldMapping) && g.oldMapping[2*i+1] == i && 2*i < len(g.mapping) && g.mapping[2*i] < i:
			l.add("/")
		default:
			l.add("|")
		}
		l.add(" ")
	}
	switch {
	case len(g.parents) > 1:
		g.setState(statePostMerge)
	case g.mappingCorrect():
		g.setState(statePadding)
	default:
		g.setState(stateCollapsing)
	}
}

// octopus draws the dashes of a merge of three or more parents.
func (g *graph) octopus(l *line) {
	dashed := len(g.parents) + g.mergeLayout - 3
	for i := 0; i < dashed; i++ {
		l.add("-")
		if i == dashed-1 {
			l.add(".")
		} else {
			l.add("-")
		}
	}
}

func (g *graph) postMergeLine(l *line) {
	seen := false
	parentCol := false
	first := plumbing.ZeroHash
	if len(g.parents) > 0 {
		first = g.parents[0]
	}
	for i := 0; i <= len(g.cols); i++ {
		var h plumbing.Hash
		if i == len(g.cols) {
			if seen {
				break
			}
			h = g.commit.Hash
		} else {
			h = g.cols[i]
		}
		switch {
		case h == g.commit.Hash:
			seen = true
			idx := g.mergeLayout
			for j := range g.parents {
				l.add(string("/|\\"[idx]))
				if idx == 2 {
					if g.edgesAdded > 0 || j < len(g.parents)-1 {
						l.add(" ")
					}
				} else {
					idx++
				}
			}
			if g.edgesAdded == 0 {
				l.add(" ")
			}
		case seen:
			if g.edgesAdded > 0 {
				l.add("\\")
			} else {
				l.add("|")
			}
			l.add(" ")
		default:
			l.add("|")
			if g.mergeLayout != 0 || i != g.commitIndex-1 {
				if parentCol {
					l.add("_")
				} else {
					l.add(" ")
				}
			}
		}
		if h == first {
			parentCol = true
		}
	}
	if g.mappingCorrect() {
		g.setState(statePadding)
	} else {
		g.setState(stateCollapsing)
	}
}

func (g *graph) collapsingLine(l *line) {
	usedHorizontal := false
	horizontal, horizontalTarget := -1, -1
	g.mapping, g.oldMapping = make([]int, len(g.mapping)), g.mapping
	for i := range g.mapping {
		g.mapping[i] = -1
	}
	for i, target := range g.oldMapping {
		if target < 0 {
			continue
		}
		switch {
		case 2*target == i:
			g.mapping[i] = target
		case i >= 1 && g.mapping[i-1] < 0:
			// Nothing to the left: move left by one.
			g.mapping[i-1] = target
			if horizontal == -1 {
				horizontal, horizontalTarget = i, target
				for j := 2*target + 3; j < i-2; j += 2 {
					g.mapping[j] = target
				}
			}
		case i >= 1 && g.mapping[i-1] == target:
			// Joins the line to the left, which goes to the same
			// commit.
		case i >= 2:
			// Crosses the line to the left.
			g.mapping[i-2] = target
			if horizontal == -1 {
				horizontal, horizontalTarget = i-1, target
				for j := 2*target + 3; j < i-2; j += 2 {
					g.mapping[j] = target
				}
			}
		}
	}
	if n := len(g.mapping); n > 0 && g.mapping[n-1] < 0 {
		g.mapping = g.mapping[:n-1]
	}
	for i, target := range g.mapping {
		switch {
		case target < 0:
			l.add(" ")
		case 2*target == i:
			l.add("|")
		case target == horizontalTarget && i != horizontal-1:
			if i != 2*target+3 {
				g.mapping[i] = -1
			}
			usedHorizontal = true
			l.add("_")
		default:
			if usedHorizontal && i < horizontal {
				g.mapping[i] = -1
			}
			l.add("/")
		}
	}
	if g.mappingCorrect() {
		g.setState(statePadding)
	}
}

// padding is the margin of a blank line between entries or after a
// newline-terminated one: the next commit's columns once it is loaded.
func (g *graph) padding() string {
	if g.state != stateCommit {
		m, _ := g.next()
		return m
	}
	var l line
	for _, h := range g.cols {
		l.add("|")
		if h == g.commit.Hash && len(g.parents) > 2 {
			l.add(strings.Repeat(" ", (len(g.parents)-2)*2))
		} else {
			l.add(" ")
		}
	}
	g.prevState = statePadding
	return g.pad(&l)
}

// graphEntry is one log entry split for the graph: whether a blank line
// separates it from the previous one, the header (whose first line goes
// on the commit line), whether a padding line ends the header (a
// tformat ending in a newline), and the diff.
type graphEntry struct {
	separator  bool
	header     string
	terminator bool
	diff       []byte
}

// write draws one entry.
func (g *graph) write(w io.Writer, c *object.Commit, e graphEntry) error {
	var b bytes.Buffer
	g.update(c)
	if e.separator {
		if g.missingNL {
			// The end of the previous format: entry's last line.
			b.WriteString("\n")
		} else {
			b.WriteString(g.padding() + "\n")
		}
	}
	// Lines before the commit line (an octopus merge's expansion).
	// The lines before and after the commit line are bounded by the
	// columns; the bound only guards against a layout that never
	// settles.
	limit := 4*(len(g.cols)+len(g.parents)) + 8
	for n := 0; ; n++ {
		m, isCommit := g.next()
		if isCommit || n > limit {
			b.WriteString(m)
			break
		}
		b.WriteString(m + "\n")
	}
	header := e.header
	endsNL := strings.HasSuffix(header, "\n")
	// A format: entry (no terminator) leaves its last line open.
	open := !e.terminator && !endsNL && len(e.diff) == 0
	hl := strings.Split(strings.TrimSuffix(header, "\n"), "\n")
	for i, l := range hl {
		if i > 0 {
			m, _ := g.next()
			b.WriteString(m)
		}
		b.WriteString(l)
		if !open || i < len(hl)-1 {
			b.WriteString("\n")
		}
	}
	for n := 0; g.state != statePadding; n++ {
		if n > limit {
			g.state = statePadding
			break
		}
		m, _ := g.next()
		if open {
			b.WriteString("\n" + m)
		} else {
			b.WriteString(m + "\n")
		}
	}
	g.missingNL = open
	if e.terminator && endsNL {
		b.WriteString(g.padding() + "\n")
	}
	for _, l := range strings.SplitAfter(string(e.diff), "\n") {
		if l != "" {
			b.WriteString(g.padding() + l)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}
