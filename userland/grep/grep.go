package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/secexec/secexec/userland/internal/grepcore"
	"github.com/secexec/secexec/userland/internal/sysmsg"
)

const (
	// chunkSize is GNU grep's read size (GOOD_READSIZE_MIN). Binary
	// detection looks at one chunk at a time, as GNU grep does, so a NUL
	// late in a large file only suppresses output from its chunk on.
	chunkSize = 96 << 10
	// defaultMaxLine bounds the memory one line (or the -B context kept
	// in memory) may use; past it grep fails like GNU grep out of memory.
	defaultMaxLine = 256 << 20
	// maxDepth bounds directory recursion; real trees are far shallower.
	maxDepth = 4096
)

var (
	// errExitMatch ends the run at the first selected line under -q.
	errExitMatch = errors.New("match found")
	errNoMemory  = &fatalError{msg: "memory exhausted", status: 2}
)

// writeError is a failed write to standard output.
type writeError struct{ err error }

func (e *writeError) Error() string { return "write error: " + sysmsg.Text(e.err) }

// errWriter remembers the first write error so long searches can stop as
// soon as nobody reads the output.
type errWriter struct {
	w   io.Writer
	err error
}

func (w *errWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.w.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// run is grep: args[0] is the program name. It returns the exit status:
// 0 if a line was selected, 1 if none was, 2 on error (unless -q already
// found a match).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runLimited(args, stdin, stdout, stderr, defaultMaxLine)
}

// runLimited is run with a custom bound on line length, for tests.
func runLimited(args []string, stdin io.Reader, stdout, stderr io.Writer, maxLine int) int {
	ew := &errWriter{w: stdout}
	g := &grepper{
		out:     bufio.NewWriterSize(ew, 64<<10),
		ew:      ew,
		stderr:  stderr,
		stdin:   stdin,
		maxLine: maxLine,
	}
	status := g.main(args)
	if err := g.out.Flush(); err != nil && status != 2 && !errors.Is(err, syscall.EPIPE) {
		g.message((&writeError{err}).Error())
		status = 2
	}
	return status
}

// grepper is one grep invocation.
type grepper struct {
	o      *options
	m      *grepcore.Matcher
	out    *bufio.Writer
	ew     *errWriter
	stderr io.Writer
	stdin  io.Reader

	maxLine      int
	outFile      int // -1: decide by whether the single operand is a directory
	outQuiet     bool
	doneOnMatch  bool
	exitOnMatch  bool
	list         listMode
	count        bool
	errseen      bool
	used         bool // output happened, so group separators apply
	omitDotSlash bool
	filename     string
}

// message prints "grep: msg" on standard error, after flushing standard
// output so the two streams interleave in order on a terminal.
func (g *grepper) message(msg string) {
	_ = g.out.Flush()
	fmt.Fprintf(g.stderr, "grep: %s\n", msg)
}

func (g *grepper) usage() {
	fmt.Fprint(g.stderr, "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n")
}

func (g *grepper) main(args []string) int {
	o, err := parseArgs(args[1:], g.stdin, g.message)
	if err != nil {
		return g.fail(err)
	}
	g.o = o
	if o.showVersion {
		fmt.Fprint(g.out, versionText)
		return 0
	}
	if o.showHelp {
		fmt.Fprint(g.out, helpText)
		return 0
	}

	var keys []string
	switch {
	case o.haveKeys && len(o.keys) == 0:
		// Only empty pattern files: nothing can match (GNU inverts -v).
		o.invert = !o.invert
		o.lines, o.words = false, false
		keys = []string{""}
	case o.haveKeys:
		for _, k := range o.keys {
			keys = append(keys, strings.Split(k, "\n")...)
		}
	case len(o.operands) > 0:
		pat := o.operands[0]
		o.operands = o.operands[1:]
		if o.syntax != grepcore.Fixed && strings.HasPrefix(pat, `\-`) {
			// GNU skips the backslash of a leading "\-" (a common way to
			// pass a pattern starting with '-').
			pat = pat[1:]
		}
		keys = strings.Split(pat, "\n")
	default:
		g.usage()
		return 2
	}
	keys = dedupe(keys)

	g.exitOnMatch = o.quiet
	g.list = o.list
	if g.exitOnMatch {
		g.list = listNone
	}
	g.count = o.count
	if g.exitOnMatch || g.list != listNone {
		// As in GNU grep 3.8, -q, -l and -L stop at the first match even
		// with -m.
		g.count = false
		g.doneOnMatch = true
	}
	g.outQuiet = g.count || g.doneOnMatch || g.exitOnMatch

	onlyEmpty := len(keys) == 1 && keys[0] == ""
	if (o.maxCount == 0 || (onlyEmpty && o.invert && !o.lines && !o.words)) && g.list != listNonMatching {
		return 1
	}

	m, err := grepcore.Compile(keys, grepcore.Options{
		Syntax:     o.syntax,
		IgnoreCase: o.icase,
		Words:      o.words,
		Lines:      o.lines,
	})
	if err != nil {
		var pe *grepcore.PatternError
		if errors.As(err, &pe) {
			for _, w := range pe.Warnings {
				g.message("warning: " + w)
			}
			g.message(pe.Msg)
			return 2
		}
		g.message(err.Error())
		return 2
	}
	for _, w := range m.Warnings {
		g.message("warning: " + w)
	}
	g.m = m

	switch {
	case o.filenameOpt == 0 && len(o.operands) <= 1:
		if o.dirs == dirRecurse {
			g.outFile = -1
		}
	case o.filenameOpt >= 0:
		g.outFile = 1
	}
	if o.deref && o.devices == devReadCommandLine {
		o.devices = devRead
	}

	files := o.operands
	switch {
	case len(files) > 0:
	case o.dirs == dirRecurse && o.recursiveAt:
		files = []string{"."}
		g.omitDotSlash = true
	default:
		files = []string{"-"}
	}

	noMatch := true
	for _, f := range files {
		nm, err := g.commandLineArg(f)
		if err != nil {
			if errors.Is(err, errExitMatch) {
				return 0
			}
			return g.fail(err)
		}
		noMatch = noMatch && nm
	}
	switch {
	case g.errseen:
		return 2
	case noMatch:
		return 1
	}
	return 0
}

// fail reports a fatal error and returns its exit status.
func (g *grepper) fail(err error) int {
	var ue *usageError
	var fe *fatalError
	var we *writeError
	switch {
	case errors.As(err, &ue):
		if ue.msg != "" {
			g.message(ue.msg)
		}
		g.usage()
		return 2
	case errors.As(err, &fe):
		g.message(fe.msg)
		return fe.status
	case errors.As(err, &we):
		if !errors.Is(we.err, syscall.EPIPE) {
			g.message(we.Error())
		}
		return 2
	}
	g.message(err.Error())
	return 2
}

func dedupe(keys []string) []string {
	seen := make(map[string]bool, len(keys))
	out := keys[:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// suppressible reports a problem with the current file unless -s.
func (g *grepper) suppressible(err error) {
	if !g.o.suppress {
		g.message(g.filename + ": " + sysmsg.Text(err))
	}
	g.errseen = true
}

func (g *grepper) commandLineArg(arg string) (bool, error) {
	if arg == "-" {
		g.filename = "(standard input)"
		if g.o.hasLabel {
			g.filename = g.o.label
		}
		return g.grepDesc(g.stdin, nil, true)
	}
	g.filename = arg
	return g.grepFile(arg, true, true)
}

func isDevice(m fs.FileMode) bool {
	return m&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0
}

func (g *grepper) skipDevices(commandLine bool) bool {
	return g.o.devices == devSkip || (g.o.devices == devReadCommandLine && !commandLine)
}

// skippedFile applies --include/--exclude to files and --exclude-dir to
// directories (GNU's skipped_file).
func (g *grepper) skippedFile(name string, commandLine, isDir bool) bool {
	if !isDir {
		return g.o.include.Excluded(name, !commandLine)
	}
	if g.o.dirs == dirSkip {
		return true
	}
	if commandLine && g.omitDotSlash {
		return false
	}
	return g.o.excludeDir.Excluded(name, !commandLine)
}

// grepFile opens and searches one file. follow=false refuses to open
// a symbolic link, silently, as GNU grep's O_NOFOLLOW does under -r.
func (g *grepper) grepFile(name string, follow, commandLine bool) (bool, error) {
	if !follow {
		if fi, err := os.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return true, nil
		}
	}
	f, err := os.Open(name)
	if err != nil {
		g.suppressible(err)
		return true, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		g.suppressible(err)
		return true, nil
	}
	return g.grepDesc(f, fi, commandLine)
}

// grepDesc searches an open input; fi is nil for standard input.
func (g *grepper) grepDesc(r io.Reader, fi fs.FileInfo, commandLine bool) (bool, error) {
	isDir := fi != nil && fi.IsDir()
	if fi != nil {
		if g.skipDevices(commandLine) && isDevice(fi.Mode()) {
			return true, nil
		}
		if commandLine && g.skippedFile(g.filename, true, isDir) {
			return true, nil
		}
	}
	if g.outFile < 0 {
		g.outFile = 0
		if isDir {
			g.outFile = 1
		}
	}
	if isDir && g.o.dirs == dirRecurse {
		return g.walk(g.filename)
	}
	if isDir && g.o.dirs == dirSkip {
		return true, nil
	}
	var count int64
	if isDir {
		// Reading a directory fails with EISDIR, as read(2) does.
		g.suppressible(syscall.EISDIR)
	} else {
		var err error
		count, err = g.grep(r, fi)
		if err != nil {
			return true, err
		}
	}
	if g.count {
		if g.outFile > 0 {
			g.out.WriteString(g.filename)
			g.out.WriteByte(g.nameSep(':'))
		}
		g.out.WriteString(strconv.FormatInt(count, 10))
		g.out.WriteByte('\n')
	}
	noMatch := count == 0
	if (g.list == listNonMatching && noMatch) || (g.list == listMatching && !noMatch) {
		g.out.WriteString(g.filename)
		if g.o.nullName {
			g.out.WriteByte(0)
		} else {
			g.out.WriteByte('\n')
		}
	}
	if g.o.lineBuf {
		g.out.Flush()
	}
	if g.ew.err != nil {
		return noMatch, &writeError{g.ew.err}
	}
	return noMatch, nil
}

func (g *grepper) nameSep(sep byte) byte {
	if g.o.nullName {
		return 0
	}
	return sep
}

// walk searches a directory tree like GNU grep's fts loop: preorder,
// entries in name order, symbolic links skipped unless -R, devices
// skipped unless -D read.
func (g *grepper) walk(root string) (bool, error) {
	var ancestors []fs.FileInfo
	if fi, err := os.Stat(root); err == nil {
		ancestors = append(ancestors, fi)
	}
	return g.walkDir(root, ancestors)
}

func (g *grepper) walkDir(dir string, ancestors []fs.FileInfo) (bool, error) {
	if len(ancestors) > maxDepth {
		g.filename = g.display(dir)
		g.suppressible(syscall.ENAMETOOLONG)
		return true, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		g.filename = g.display(dir)
		g.suppressible(err)
		if len(entries) == 0 {
			return true, nil
		}
	}
	noMatch := true
	for _, e := range entries {
		name := e.Name()
		path := dir + "/" + name
		if strings.HasSuffix(dir, "/") {
			path = dir + name
		}
		mode := e.Type()
		var target fs.FileInfo
		if mode&fs.ModeSymlink != 0 {
			if !g.o.deref {
				// -r never follows links found while recursing.
				continue
			}
			fi, err := os.Stat(path)
			if err != nil {
				// A dangling link: GNU grep tries to open it and reports
				// the failure.
				if !g.skippedFile(name, false, false) {
					g.filename = g.display(path)
					g.suppressible(err)
				}
				continue
			}
			target = fi
			mode = fi.Mode().Type()
		}
		isDir := mode.IsDir()
		if g.skippedFile(name, false, isDir) {
			continue
		}
		g.filename = g.display(path)
		switch {
		case isDir:
			if target == nil {
				fi, err := os.Stat(path)
				if err != nil {
					g.suppressible(err)
					continue
				}
				target = fi
			}
			if loops(target, ancestors) {
				if !g.o.suppress {
					g.message(g.filename + ": warning: recursive directory loop")
				}
				continue
			}
			nm, err := g.walkDir(path, append(ancestors, target))
			if err != nil {
				return false, err
			}
			noMatch = noMatch && nm
		case isDevice(mode) && g.skipDevices(false):
			continue
		default:
			nm, err := g.grepFile(path, g.o.deref, false)
			if err != nil {
				return false, err
			}
			noMatch = noMatch && nm
		}
	}
	return noMatch, nil
}

func loops(fi fs.FileInfo, ancestors []fs.FileInfo) bool {
	for _, a := range ancestors {
		if os.SameFile(fi, a) {
			return true
		}
	}
	return false
}

// display is the name grep prints for a path found while recursing:
// without the "./" it added itself when no operand was given.
func (g *grepper) display(path string) string {
	if g.omitDotSlash && strings.HasPrefix(path, "./") {
		return path[2:]
	}
	return path
}

// ringLine is a line kept for -B context.
type ringLine struct {
	text   []byte
	lineNo int64
	offset int64
}

// fileState is the per-file part of GNU grep's grep()/prtext() state.
type fileState struct {
	g           *grepper
	eol         byte
	outleft     int64
	pending     int64
	outQuiet    bool
	doneOnMatch bool
	nlines      int64
	firstNull   int64 // nlines when a NUL was first seen, -1 if none
	encErr      bool  // an output line was withheld for an encoding error
	lastOut     int64 // line number of the last line output, -1 if none
	offsetWidth int

	ring      []ringLine // -B context, oldest first, from ringStart
	ringStart int
	ringBytes int
}

// grep searches one input and returns the number of selected lines.
func (g *grepper) grep(r io.Reader, fi fs.FileInfo) (int64, error) {
	o := g.o
	s := &fileState{
		g:           g,
		eol:         '\n',
		outleft:     o.maxCount,
		outQuiet:    g.outQuiet,
		doneOnMatch: g.doneOnMatch,
		firstNull:   -1,
		lastOut:     -1,
	}
	if o.nullData {
		s.eol = 0
	}
	if s.outleft == 0 {
		return 0, nil
	}
	if o.alignTabs {
		num := int64(math.MaxInt64)
		if fi != nil && fi.Mode().IsRegular() {
			num = fi.Size()
			if o.lineNumber {
				num++
			}
		}
		s.offsetWidth = len(strconv.FormatInt(num, 10))
	}
	err := s.scan(r)
	if err != nil {
		return s.nlines, err
	}
	if o.binary == binaryBinary && !g.outQuiet &&
		(s.encErr || (s.firstNull >= 0 && s.firstNull < s.nlines)) {
		g.message(g.filename + ": binary file matches")
	}
	return s.nlines, nil
}

// scan reads the input in chunks and feeds it line by line to s.line.
func (s *fileState) scan(r io.Reader) error {
	g, o := s.g, s.g.o
	var data []byte
	start := 0 // first unprocessed byte of data
	var lineNo, offset int64
	zap := false
	for eof := false; !eof; {
		if start > 0 {
			n := copy(data, data[start:])
			data = data[:n]
			start = 0
		}
		if len(data) > g.maxLine {
			return errNoMemory
		}
		if cap(data)-len(data) < chunkSize {
			grown := make([]byte, len(data), max(2*cap(data), len(data)+chunkSize))
			copy(grown, data)
			data = grown
		}
		n, rerr := r.Read(data[len(data) : len(data)+chunkSize])
		fresh := data[len(data) : len(data)+n]
		data = data[:len(data)+n]
		if rerr != nil {
			if rerr != io.EOF {
				g.suppressible(rerr)
				return nil
			}
			eof = true
		} else if n == 0 {
			continue
		}
		// The unprocessed residue was checked when it was read, so only
		// fresh bytes need looking at (keeping long lines linear).
		if s.firstNull < 0 && s.eol != 0 && o.binary != binaryText && bytes.IndexByte(fresh, 0) >= 0 {
			if o.binary == binaryWithoutMatch {
				s.nlines = 0
				return nil
			}
			if !g.count {
				s.outQuiet = true
				s.doneOnMatch = true
			}
			s.firstNull = s.nlines
			zap = true
		}
		if zap {
			// GNU grep turns NULs into line ends in binary data, so a
			// long run of zeros is not one huge line.
			for i, c := range fresh {
				if c == 0 {
					fresh[i] = s.eol
				}
			}
		}
		// The residue holds no line end, so the last one is in fresh.
		limit := len(data)
		if !eof {
			limit = 0
			if i := bytes.LastIndexByte(fresh, s.eol); i >= 0 {
				limit = len(data) - len(fresh) + i + 1
			}
		}
		for start < limit {
			var line []byte
			next := limit
			if i := bytes.IndexByte(data[start:limit], s.eol); i >= 0 {
				line = data[start : start+i]
				next = start + i + 1
			} else {
				line = data[start:limit]
			}
			lineNo++
			done, err := s.line(line, lineNo, offset)
			if err != nil {
				return err
			}
			offset += int64(next - start)
			start = next
			if done {
				return nil
			}
		}
	}
	return nil
}

// line handles one input line; done means the rest of the input is not
// needed.
func (s *fileState) line(line []byte, lineNo, offset int64) (bool, error) {
	g, o := s.g, s.g.o
	if s.outleft == 0 {
		// -m was reached; only trailing context is still printed.
		if s.pending > 0 && !s.outQuiet {
			if err := s.prline(line, lineNo, offset, '-'); err != nil {
				return true, err
			}
			s.pending--
		}
		return s.pending == 0, nil
	}
	if g.m.Match(line) == o.invert {
		if s.pending > 0 && !s.outQuiet {
			s.pending--
			return false, s.prline(line, lineNo, offset, '-')
		}
		return false, s.remember(line, lineNo, offset)
	}
	if g.list != listNone {
		s.nlines = 1
		return true, nil
	}
	if err := s.prtext(line, lineNo, offset); err != nil {
		return true, err
	}
	s.nlines++
	if s.outleft == 0 || s.doneOnMatch {
		if g.exitOnMatch {
			return true, errExitMatch
		}
		if s.doneOnMatch {
			return true, nil
		}
		return s.pending == 0, nil
	}
	return false, nil
}

// remember keeps a non-selected line for -B context.
func (s *fileState) remember(line []byte, lineNo, offset int64) error {
	before := s.g.o.before
	if before <= 0 || s.outQuiet {
		return nil
	}
	live := len(s.ring) - s.ringStart
	var slot ringLine
	if int64(live) >= before {
		slot = s.ring[s.ringStart]
		s.ringBytes -= len(slot.text)
		s.ring[s.ringStart] = ringLine{}
		s.ringStart++
	}
	if s.ringStart > 64 && s.ringStart*2 > len(s.ring) {
		n := copy(s.ring, s.ring[s.ringStart:])
		clear(s.ring[n:])
		s.ring = s.ring[:n]
		s.ringStart = 0
	}
	slot.text = append(slot.text[:0], line...)
	slot.lineNo, slot.offset = lineNo, offset
	s.ring = append(s.ring, slot)
	s.ringBytes += len(line)
	if s.ringBytes > s.g.maxLine {
		return errNoMemory
	}
	return nil
}

// prtext outputs a selected line with its leading context (GNU prtext).
func (s *fileState) prtext(line []byte, lineNo, offset int64) error {
	g, o := s.g, s.g.o
	if !s.outQuiet {
		first := lineNo - int64(len(s.ring)-s.ringStart)
		if (o.before >= 0 || o.after >= 0) && g.used && o.hasGroupSep &&
			(s.lastOut < 0 || first != s.lastOut+1) {
			g.out.WriteString(o.groupSep)
			g.out.WriteByte('\n')
		}
		for _, rl := range s.ring[s.ringStart:] {
			if err := s.prline(rl.text, rl.lineNo, rl.offset, '-'); err != nil {
				return err
			}
		}
		s.ring = s.ring[:0]
		s.ringStart = 0
		s.ringBytes = 0
		if err := s.prline(line, lineNo, offset, ':'); err != nil {
			return err
		}
		s.pending = max(0, o.after)
	} else {
		s.pending = 0
	}
	g.used = true
	s.outleft--
	return nil
}

// prline outputs one line (GNU prline), or with -o its matches.
func (s *fileState) prline(line []byte, lineNo, offset int64, sep byte) error {
	g, o := s.g, s.g.o
	if !o.only && !s.head(line, lineNo, offset, sep) {
		return nil
	}
	matching := (sep == ':') != o.invert
	switch {
	case o.only && matching:
		msep := byte(':')
		if o.invert {
			msep = '-'
		}
		for cur := 0; cur <= len(line); {
			b, e, ok := g.m.Find(line, cur)
			if !ok {
				break
			}
			if e == b {
				// An empty match: step one byte, as GNU grep does.
				cur = b + 1
				continue
			}
			text := line[b:min(e, len(line))]
			if !s.head(text, lineNo, offset+int64(b), msep) {
				return nil
			}
			g.out.Write(text)
			if e > len(line) {
				g.out.WriteByte(s.eol)
			}
			g.out.WriteByte(s.eol)
			cur = e
		}
	case !o.only:
		g.out.Write(line)
		g.out.WriteByte(s.eol)
	}
	if o.lineBuf {
		g.out.Flush()
	}
	s.lastOut = lineNo
	if g.ew.err != nil {
		return &writeError{g.ew.err}
	}
	return nil
}

// head writes the file name, line number and byte offset before output
// data (GNU print_line_head). It refuses data that is not valid UTF-8:
// such a file is reported as binary instead.
func (s *fileState) head(data []byte, lineNo, offset int64, sep byte) bool {
	g, o := s.g, s.g.o
	if o.binary != binaryText && !utf8.Valid(data) {
		s.encErr = true
		return false
	}
	if g.outFile > 0 {
		g.out.WriteString(g.filename)
		g.out.WriteByte(g.nameSep(sep))
	}
	if o.lineNumber {
		s.number(lineNo)
		g.out.WriteByte(sep)
	}
	if o.byteOffset {
		s.number(offset)
		g.out.WriteByte(sep)
	}
	if o.alignTabs && (g.outFile > 0 || o.lineNumber || o.byteOffset) && len(data) != 0 {
		g.out.WriteByte('\t')
	}
	return true
}

func (s *fileState) number(n int64) {
	str := strconv.FormatInt(n, 10)
	for i := len(str); i < s.offsetWidth; i++ {
		s.g.out.WriteByte(' ')
	}
	s.g.out.WriteString(str)
}
