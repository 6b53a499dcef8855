package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A unified diff, read the way GNU patch reads one: text that is not a
// diff is skipped, each hunk is exactly as long as its header's counts
// say, and both file names of a traditional header are kept (patch picks
// between them after stripping -p components).

// diffLine is one line of a hunk: its operation (' ', '-', '+') and its
// text with the newline, which is missing when the line ends its file.
type diffLine struct {
	op   byte
	text string
}

// hunk is one "@@ -a,b +c,d @@" section.
type hunk struct {
	oldStart, oldLines int
	newStart, newLines int
	section            string
	lines              []diffLine
}

// filePatch is the patch of one file.
type filePatch struct {
	oldName, newName string // as written, /dev/null included
	oldTime, newTime string // what followed the names' tab, if anything
	gitOld, gitNew   string // the names of a "diff --git" line
	indexName        string // an "Index:" line's name
	gitNewFile       bool
	gitDeletedFile   bool
	reversed         bool     // -R: creation and deletion trade places
	leading          []string // the text before the first hunk
	hunkLine         int      // input line of the first hunk header
	hunks            []hunk
}

// isCreation reports whether the patch makes a new file: the old side is
// /dev/null or carries the epoch timestamp GNU diff -N writes.
func (f *filePatch) isCreation() bool {
	if f.reversed {
		return f.deletesOld()
	}
	return f.createsNew()
}

func (f *filePatch) createsNew() bool {
	return f.gitNewFile || f.oldName == "/dev/null" || isEpoch(f.oldTime)
}

func (f *filePatch) deletesOld() bool {
	return f.gitDeletedFile || f.newName == "/dev/null" || isEpoch(f.newTime)
}

// isDeletion reports whether the patch removes the file.
func (f *filePatch) isDeletion() bool {
	if f.reversed {
		return f.createsNew()
	}
	return f.deletesOld()
}

func isEpoch(ts string) bool {
	return strings.HasPrefix(ts, "1970-01-01 00:00:00") || strings.HasPrefix(ts, "1969-12-31 ")
}

// malformedError is GNU patch's "malformed patch at line N: TEXT".
type malformedError struct {
	line int
	text string
}

// Error keeps the line's own newline: GNU patch prints the line as read,
// then its own newline.
func (e *malformedError) Error() string {
	return fmt.Sprintf("malformed patch at line %d: %s", e.line, e.text)
}

// maxDiffLine bounds one line of a diff, so that a hostile input cannot
// make a line of unbounded size.
const maxDiffLine = 64 << 20

// lineReader reads lines, counting them.
type lineReader struct {
	r       *bufio.Reader
	n       int
	pending []string
	// markers counts the "\ No newline" lines read, which GNU patch
	// leaves out of the line numbers it reports.
	markers int
}

func (l *lineReader) next() (string, error) {
	if len(l.pending) > 0 {
		s := l.pending[0]
		l.pending = l.pending[1:]
		l.n++
		return s, nil
	}
	var b strings.Builder
	for {
		frag, err := l.r.ReadSlice('\n')
		b.Write(frag)
		if b.Len() > maxDiffLine {
			return "", fmt.Errorf("line %d is longer than %d bytes", l.n+1, maxDiffLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && b.Len() == 0 {
			return "", err
		}
		l.n++
		return b.String(), nil
	}
}

func (l *lineReader) unread(s string) {
	l.pending = append([]string{s}, l.pending...)
	l.n--
}

// peek returns the next k lines without consuming them (fewer at EOF).
func (l *lineReader) peek(k int) []string {
	var got []string
	for i := 0; i < k; i++ {
		s, err := l.next()
		if err != nil {
			break
		}
		got = append(got, s)
	}
	for i := len(got) - 1; i >= 0; i-- {
		l.unread(got[i])
	}
	return got
}

// parseDiff reads every file patch from r; sawText reports whether the
// input had anything but blank lines.
func parseDiff(r io.Reader) (files []*filePatch, sawText bool, err error) {
	sawText, _, err = eachFilePatch(r, func(f *filePatch) error {
		files = append(files, f)
		return nil
	})
	return files, sawText, err
}

// eachFilePatch reads file patches from r and hands each to fn as soon as
// it is complete, as GNU patch applies each file before reading the next.
// When a hunk is malformed, partial is the file it belongs to.
func eachFilePatch(r io.Reader, fn func(*filePatch) error) (sawText bool, partial *filePatch, err error) {
	lr := &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
	var leading []string
	var gitOld, gitNew, index string
	gitNewFile, gitDeleted := false, false
	for {
		line, err := lr.next()
		if err == io.EOF {
			return sawText, nil, nil
		}
		if err != nil {
			return sawText, nil, err
		}
		if strings.TrimSpace(line) != "" {
			sawText = true
		}
		switch {
		case strings.HasPrefix(line, "diff --git "):
			leading = leading[:0]
			gitOld, gitNew = splitGitNames(strings.TrimSuffix(line[len("diff --git "):], "\n"))
			gitNewFile, gitDeleted = false, false
		case strings.HasPrefix(line, "new file mode "):
			gitNewFile = true
		case strings.HasPrefix(line, "deleted file mode "):
			gitDeleted = true
		case strings.HasPrefix(line, "Index: "):
			index = strings.TrimSpace(line[len("Index: "):])
		}
		leading = append(leading, line)
		if !strings.HasPrefix(line, "--- ") {
			continue
		}
		ahead := lr.peek(2)
		if len(ahead) < 2 || !strings.HasPrefix(ahead[0], "+++ ") || !strings.HasPrefix(ahead[1], "@@ -") {
			continue
		}
		plus, _ := lr.next()
		leading = append(leading, plus)
		f := &filePatch{gitOld: gitOld, gitNew: gitNew, indexName: index, gitNewFile: gitNewFile, gitDeletedFile: gitDeleted}
		f.oldName, f.oldTime = splitHeaderName(line[4:])
		f.newName, f.newTime = splitHeaderName(plus[4:])
		f.leading = append([]string(nil), leading...)
		f.hunkLine = lr.n + 1 - lr.markers
		for {
			next := lr.peek(1)
			if len(next) == 0 || !strings.HasPrefix(next[0], "@@ -") {
				break
			}
			hl, _ := lr.next()
			h, err := parseHunk(lr, hl)
			if err != nil {
				return sawText, f, err
			}
			f.hunks = append(f.hunks, h)
		}
		if err := fn(f); err != nil {
			return sawText, nil, err
		}
		leading = leading[:0]
		gitOld, gitNew, index = "", "", ""
		gitNewFile, gitDeleted = false, false
	}
}

// splitHeaderName splits "name\ttimestamp\n" (names may be quoted).
func splitHeaderName(s string) (name, ts string) {
	s = strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
	if strings.HasPrefix(s, "\"") {
		if q, err := strconv.QuotedPrefix(s); err == nil {
			if u, err := strconv.Unquote(q); err == nil {
				return u, strings.TrimSpace(s[len(q):])
			}
		}
	}
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return strings.TrimRight(s, " "), ""
}

// splitGitNames splits "a/x b/x" of a "diff --git" line, where the two
// names are the same file's when there is no rename.
func splitGitNames(s string) (string, string) {
	if n := len(s); n%2 == 1 {
		half := (n - 1) / 2
		a, b := s[:half], s[half+1:]
		if s[half] == ' ' && strings.HasPrefix(a, "a/") && strings.HasPrefix(b, "b/") && a[2:] == b[2:] {
			return a, b
		}
	}
	if i := strings.Index(s, " b/"); i >= 0 {
		return s[:i], s[i+1:]
	}
	return "", ""
}

// parseHunkHeader reads "@@ -a[,b] +c[,d] @@ section".
func parseHunkHeader(line string) (hunk, bool) {
	var h hunk
	rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "@@ -")
	if !ok {
		return h, false
	}
	old, rest, ok := strings.Cut(rest, " +")
	if !ok {
		return h, false
	}
	nw, section, ok := strings.Cut(rest, " @@")
	if !ok {
		return h, false
	}
	var ok1, ok2 bool
	h.oldStart, h.oldLines, ok1 = parseRange(old)
	h.newStart, h.newLines, ok2 = parseRange(nw)
	h.section = strings.TrimPrefix(section, " ")
	return h, ok1 && ok2
}

func parseRange(s string) (start, count int, ok bool) {
	a, b, hasCount := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 || start > 1<<40 {
		return 0, 0, false
	}
	count = 1
	if hasCount {
		if count, err = strconv.Atoi(b); err != nil || count < 0 || count > 1<<40 {
			return 0, 0, false
		}
	}
	return start, count, true
}

var errPrematureEnd = errors.New("unexpected end of file in patch")

// parseHunk reads the body its header announces.
func parseHunk(lr *lineReader, header string) (hunk, error) {
	h, ok := parseHunkHeader(header)
	if !ok {
		return h, &malformedError{lr.n, header}
	}
	oldLeft, newLeft := h.oldLines, h.newLines
	for oldLeft > 0 || newLeft > 0 {
		line, err := lr.next()
		if err == io.EOF {
			return h, errPrematureEnd
		}
		if err != nil {
			return h, err
		}
		op := byte(' ')
		text := line
		switch {
		case line == "\n" || line == "\r\n":
			// An empty line stands for an empty context line (some
			// tools strip the trailing blank).
		case line[0] == ' ' || line[0] == '-' || line[0] == '+':
			op, text = line[0], line[1:]
		case strings.HasPrefix(line, "\\") && len(h.lines) > 0:
			lr.markers++
			last := &h.lines[len(h.lines)-1]
			last.text = strings.TrimSuffix(last.text, "\n")
			continue
		default:
			return h, &malformedError{lr.n, line}
		}
		switch op {
		case ' ':
			oldLeft--
			newLeft--
		case '-':
			oldLeft--
		case '+':
			newLeft--
		}
		if oldLeft < 0 || newLeft < 0 {
			return h, &malformedError{lr.n, line}
		}
		if !strings.HasSuffix(text, "\n") {
			text += "\n" // the last line of a patch without its newline
		}
		h.lines = append(h.lines, diffLine{op, text})
	}
	// A "\ No newline at end of file" after the last line.
	if next := lr.peek(1); len(next) == 1 && strings.HasPrefix(next[0], "\\") && len(h.lines) > 0 {
		lr.next()
		lr.markers++
		last := &h.lines[len(h.lines)-1]
		last.text = strings.TrimSuffix(last.text, "\n")
		// With a context last line, the marker may also belong to
		// the matching line of the other side: a following marker is
		// handled the same way.
	}
	return h, nil
}
