package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/secexec/secexec/userland/internal/sysmsg"
)

type patchOptions struct {
	strip     int // -1: not given (basename only)
	dryRun    bool
	reverse   bool
	input     string
	output    string
	target    string // the originalfile operand
	noBackups bool
}

// runPatch is GNU patch 2.7 for unified diffs: -p N, -R, -i FILE, -o
// FILE, --dry-run, creating and deleting files, its "patching file"
// lines, offsets ("Hunk #2 succeeded at 14 (offset 3 lines).") and
// failures ("Hunk #1 FAILED at 3.", a .rej file, a .orig backup and exit
// status 1). Context must match exactly: there is no fuzz.
func runPatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, operands, err := getopt(args[1:], "p:Ri:o:NsfEtub", []string{"strip=", "dry-run", "reverse", "input=", "output=", "forward", "quiet", "silent", "force", "batch", "unified", "no-backup-if-mismatch", "remove-empty-files", "backup"})
	if err != nil {
		fmt.Fprintf(stderr, "patch: %s\npatch: Try 'patch --help' for more information.\n", err)
		return 2
	}
	o := patchOptions{strip: -1}
	for _, op := range opts {
		switch op.name {
		case "p", "strip":
			n, err := strconv.Atoi(op.arg)
			if err != nil || n < 0 {
				fmt.Fprintf(stderr, "patch: **** strip count %s is not a number\n", op.arg)
				return 2
			}
			o.strip = n
		case "R", "reverse":
			o.reverse = true
		case "i", "input":
			o.input = op.arg
		case "o", "output":
			o.output = op.arg
		case "dry-run":
			o.dryRun = true
		case "no-backup-if-mismatch":
			o.noBackups = true
		}
	}
	if len(operands) > 0 {
		o.target = operands[0]
	}
	if len(operands) > 1 && o.input == "" {
		o.input = operands[1]
	}
	in := stdin
	if o.input != "" && o.input != "-" {
		f, err := os.Open(o.input)
		if err != nil {
			fmt.Fprintf(stderr, "patch: **** Can't open patch file %s : %s\n", o.input, sysmsg.Text(err))
			return 2
		}
		defer f.Close()
		in = f
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	status := 0
	var outFile *os.File
	files := 0
	var applyErr error
	sawText, partial, perr := eachFilePatch(in, func(fp *filePatch) error {
		files++
		if o.reverse {
			reversePatch(fp)
		}
		s, err := applyFilePatch(fp, o, out, &outFile)
		if err != nil {
			applyErr = err
			return err
		}
		status = max(status, s)
		return nil
	})
	if applyErr != nil {
		out.Flush()
		fmt.Fprintf(stderr, "patch: **** %s\n", applyErr)
		return 2
	}
	if partial != nil {
		// GNU patch has found the file (or not) before it meets the bad
		// hunk: say so, then stop.
		files++
		if o.reverse {
			reversePatch(partial)
		}
		announceFile(partial, o, out)
	}
	if outFile != nil {
		if err := outFile.Close(); err != nil {
			out.Flush()
			fmt.Fprintf(stderr, "patch: **** Can't write to %s : %s\n", o.output, sysmsg.Text(err))
			return 2
		}
	}
	if perr != nil {
		out.Flush()
		var me *malformedError
		if errors.As(perr, &me) {
			fmt.Fprintf(stderr, "patch: **** %s", perr)
			if !strings.HasSuffix(perr.Error(), "\n") {
				fmt.Fprintln(stderr)
			}
			fmt.Fprintln(stderr)
		} else if errors.Is(perr, errPrematureEnd) {
			fmt.Fprintf(stderr, "patch: **** %s\n", perr)
		} else {
			fmt.Fprintf(stderr, "patch: **** %s\n", sysmsg.Text(perr))
		}
		return 2
	}
	if files == 0 && sawText {
		out.Flush()
		fmt.Fprintln(stderr, "patch: **** Only garbage was found in the patch input.")
		return 2
	}
	return status
}

// reversePatch exchanges the sides of every hunk. The names keep their
// places: GNU patch chooses the file before reversing.
func reversePatch(fp *filePatch) {
	fp.reversed = !fp.reversed
	for i := range fp.hunks {
		fp.hunks[i] = reverseHunk(fp.hunks[i])
	}
}

// stripName removes n leading components ("-p n"); n < 0 keeps only the
// base name. ok is false when the name has too few components.
func stripName(name string, n int) (string, bool) {
	if name == "" || name == "/dev/null" {
		return "", false
	}
	if n < 0 {
		return filepath.Base(name), true
	}
	s := name
	for i := 0; i < n; i++ {
		j := strings.IndexByte(s, '/')
		if j < 0 {
			return "", false
		}
		s = strings.TrimLeft(s[j+1:], "/")
	}
	if s == "" {
		return "", false
	}
	return s, true
}

// chooseName is GNU patch's choice among the names a patch offers: of
// those that exist, the one with the fewest components, then the shortest
// base name, then the shortest; a creation takes the new name.
func chooseName(fp *filePatch, strip int) (string, bool) {
	var cands []string
	add := func(n string) {
		if s, ok := stripName(n, strip); ok {
			cands = append(cands, s)
		}
	}
	if fp.isCreation() {
		newName, gitNew := fp.newName, fp.gitNew
		if fp.reversed {
			newName, gitNew = fp.oldName, fp.gitOld
		}
		add(newName)
		add(gitNew)
		if len(cands) > 0 {
			return cands[0], true
		}
		return "", false
	}
	add(fp.oldName)
	add(fp.newName)
	add(fp.indexName)
	best := ""
	for _, c := range cands {
		if _, err := os.Stat(c); err != nil {
			continue
		}
		if best == "" || better(c, best) {
			best = c
		}
	}
	if best != "" {
		return best, true
	}
	if fp.isDeletion() {
		oldName := fp.oldName
		if fp.reversed {
			oldName = fp.newName
		}
		if s, ok := stripName(oldName, strip); ok {
			return s, false
		}
	}
	if len(cands) > 0 {
		return cands[0], false
	}
	return "", false
}

func better(a, b string) bool {
	ca, cb := strings.Count(a, "/"), strings.Count(b, "/")
	if ca != cb {
		return ca < cb
	}
	ba, bb := len(filepath.Base(a)), len(filepath.Base(b))
	if ba != bb {
		return ba < bb
	}
	return len(a) < len(b)
}

// hunkCount is "1 out of 2 hunks": the noun agrees with the total.
func hunkCount(failed, total int) string {
	if total == 1 {
		return fmt.Sprintf("%d out of %d hunk", failed, total)
	}
	return fmt.Sprintf("%d out of %d hunks", failed, total)
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// splitLines splits content into lines that keep their newlines.
func splitLines(s string) []string {
	var lines []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// announceFile prints what GNU patch prints about a file before it reads
// the file's hunks: "patching file NAME", or that it cannot find it.
func announceFile(fp *filePatch, o patchOptions, out *bufio.Writer) {
	name, found := chooseName(fp, o.strip)
	if o.target != "" {
		name, found = o.target, true
	}
	switch {
	case found && o.dryRun:
		fmt.Fprintf(out, "checking file %s\n", name)
	case found:
		fmt.Fprintf(out, "patching file %s\n", name)
	default:
		cantFind(fp, o, out)
	}
}

// cantFind is GNU patch's account of a file it cannot find; with no
// terminal to ask, it skips the file.
func cantFind(fp *filePatch, o patchOptions, out *bufio.Writer) {
	fmt.Fprintf(out, "can't find file to patch at input line %d\n", fp.hunkLine)
	if o.strip < 0 {
		out.WriteString("Perhaps you should have used the -p or --strip option?\n")
	} else {
		out.WriteString("Perhaps you used the wrong -p or --strip option?\n")
	}
	out.WriteString("The text leading up to this was:\n--------------------------\n")
	for _, l := range fp.leading {
		out.WriteString("|" + strings.TrimSuffix(l, "\n") + "\n")
	}
	out.WriteString("--------------------------\nFile to patch: \nSkip this patch? [y] \nSkipping patch.\n")
}

// applyFilePatch patches one file and returns the exit status so far.
func applyFilePatch(fp *filePatch, o patchOptions, out *bufio.Writer, outFile **os.File) (int, error) {
	name, found := chooseName(fp, o.strip)
	if o.target != "" {
		name, found = o.target, true
	}
	if !found && fp.isDeletion() && name != "" {
		fmt.Fprintf(out, "%s delete the file %s,\nwhich does not exist!  %s? [n] \nApply anyway? [n] \nSkipping patch.\n%s ignored\n",
			nextPatch(fp), name, assumeR(fp), hunkCount(len(fp.hunks), len(fp.hunks)))
		return 1, nil
	}
	if !found {
		cantFind(fp, o, out)
		fmt.Fprintf(out, "%s ignored\n", hunkCount(len(fp.hunks), len(fp.hunks)))
		return 1, nil
	}
	var content []byte
	exists := false
	if fi, err := os.Stat(name); err == nil {
		if !fi.Mode().IsRegular() {
			return 0, fatalf("File %s is not a regular file -- can't patch", name)
		}
		content, err = os.ReadFile(name)
		if err != nil {
			return 0, fatalf("Can't open file %s : %s", name, sysmsg.Text(err))
		}
		exists = true
	}
	if fp.isCreation() && exists && len(content) > 0 && o.target == "" {
		fmt.Fprintf(out, "%s create the file %s,\nwhich already exists!  %s? [n] \nApply anyway? [n] \nSkipping patch.\n%s ignored\n",
			nextPatch(fp), name, assumeR(fp), hunkCount(len(fp.hunks), len(fp.hunks)))
		return 1, nil
	}
	if fp.isDeletion() && !exists && o.target == "" {
		fmt.Fprintf(out, "%s delete the file %s,\nwhich does not exist!  %s? [n] \nApply anyway? [n] \nSkipping patch.\n%s ignored\n",
			nextPatch(fp), name, assumeR(fp), hunkCount(len(fp.hunks), len(fp.hunks)))
		return 1, nil
	}
	verb := "patching"
	if o.dryRun {
		verb = "checking"
	}
	switch {
	case o.output != "":
		fmt.Fprintf(out, "%s file %s (read from %s)\n", verb, o.output, name)
	default:
		fmt.Fprintf(out, "%s file %s\n", verb, name)
	}
	lines := splitLines(string(content))
	rej := name + ".rej"
	if o.output != "" {
		rej = o.output + ".rej"
	}
	if len(fp.hunks) > 0 && !hunkApplies(lines, fp.hunks[0]) && hunkApplies(lines, reverseHunk(fp.hunks[0])) {
		// The patch looks applied already (or, with -R, not yet).
		if o.reverse {
			out.WriteString("Unreversed patch detected!  Ignore -R? [n] \n")
		} else {
			out.WriteString("Reversed (or previously applied) patch detected!  Assume -R? [n] \n")
		}
		out.WriteString("Apply anyway? [n] \nSkipping patch.\n")
		fmt.Fprintf(out, "%s ignored", hunkCount(len(fp.hunks), len(fp.hunks)))
		if !o.dryRun {
			all := make([]int, len(fp.hunks))
			for i := range all {
				all[i] = i + 1
			}
			fmt.Fprintf(out, " -- saving rejects to file %s", rej)
			if err := writeRejects(rej, fp, o.strip, all, nil); err != nil {
				return 0, err
			}
		}
		out.WriteString("\n")
		return 1, nil
	}
	result, failed, offsets, moved := applyHunks(lines, fp.hunks, out)
	if len(failed) > 0 {
		fmt.Fprintf(out, "%s FAILED", hunkCount(len(failed), len(fp.hunks)))
		if !o.dryRun {
			fmt.Fprintf(out, " -- saving rejects to file %s", rej)
			if err := writeRejects(rej, fp, o.strip, failed, offsets); err != nil {
				return 0, err
			}
		}
		out.WriteString("\n")
	}
	// Like GNU patch, keep the original when the patch did not match
	// exactly (a hunk failed or was found at an offset).
	if (len(failed) > 0 || moved) && !o.dryRun && !o.noBackups && o.output == "" && exists {
		if err := os.WriteFile(name+".orig", content, 0o644); err != nil {
			return 0, fatalf("Can't create file %s.orig : %s", name, sysmsg.Text(err))
		}
	}
	if o.dryRun {
		return boolStatus(len(failed) > 0), nil
	}
	text := strings.Join(result, "")
	if o.output != "" {
		if o.output == "-" {
			out.WriteString(text)
			return boolStatus(len(failed) > 0), nil
		}
		if *outFile == nil {
			f, err := os.OpenFile(o.output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
			if err != nil {
				return 0, fatalf("Can't create file %s : %s", o.output, sysmsg.Text(err))
			}
			*outFile = f
		}
		if _, err := io.WriteString(*outFile, text); err != nil {
			return 0, fatalf("Can't write to %s : %s", o.output, sysmsg.Text(err))
		}
		return boolStatus(len(failed) > 0), nil
	}
	if fp.isDeletion() && text == "" && len(failed) == 0 {
		if err := os.Remove(name); err != nil {
			return 0, fatalf("Can't remove file %s : %s", name, sysmsg.Text(err))
		}
		// GNU patch also removes directories the deletion left empty.
		for dir := filepath.Dir(name); dir != "." && dir != "/"; dir = filepath.Dir(dir) {
			if os.Remove(dir) != nil {
				break
			}
		}
		return 0, nil
	}
	if !exists {
		if dir := filepath.Dir(name); dir != "." {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return 0, fatalf("Can't create directory %s : %s", dir, sysmsg.Text(err))
			}
		}
	}
	mode := os.FileMode(0o644)
	if perm, ok := permOf(name, true); ok {
		mode = perm
	}
	if err := writeFileAtomic(name, []byte(text), mode); err != nil {
		return 0, fatalf("Can't create file %s : %s", name, sysmsg.Text(err))
	}
	return boolStatus(len(failed) > 0), nil
}

// fatalf makes one of GNU patch's "patch: **** MESSAGE" texts.
func fatalf(format string, a ...any) error { return message(fmt.Sprintf(format, a...)) }

func nextPatch(fp *filePatch) string {
	if fp.reversed {
		return "The next patch, when reversed, would"
	}
	return "The next patch would"
}

func assumeR(fp *filePatch) string {
	if fp.reversed {
		return "Ignore -R"
	}
	return "Assume -R"
}

func boolStatus(b bool) int {
	if b {
		return 1
	}
	return 0
}

// writeFileAtomic replaces name through a temporary file beside it, so
// a failed write leaves the original intact.
func writeFileAtomic(name string, data []byte, mode os.FileMode) error {
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".patchtmp")
	if err := os.WriteFile(tmp, data, mode); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := chmod(tmp, mode); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// applyHunks applies the hunks in order. Each hunk is looked for where
// its header says, moved by the offset the previous hunk was found at,
// then at growing distances either way, never before the end of the
// previous hunk; its context must match exactly. It returns the new
// lines and the numbers (1-based) of the hunks that failed.
func applyHunks(lines []string, hunks []hunk, out *bufio.Writer) (result []string, failed []int, offsets map[int]int, moved bool) {
	offsets = make(map[int]int)
	done := 0   // lines of the input already copied or consumed
	offset := 0 // where the previous hunk was found, less where it said
	for i, h := range hunks {
		var old, nw []string
		for _, l := range h.lines {
			if l.op != '+' {
				old = append(old, l.text)
			}
			if l.op != '-' {
				nw = append(nw, l.text)
			}
		}
		want := h.oldStart - 1
		if h.oldLines == 0 {
			want = h.oldStart // an insertion goes after that line
		}
		want += offset
		// A hunk with less context before than after must match at the
		// start of the file, one with less after at the end, as in GNU
		// patch (the diff was cut short by the file's edge).
		lead, trail := contextCounts(h)
		atStart, atEnd := lead < trail, trail < lead
		fits := func(p int) bool {
			return (!atStart || p == 0) && (!atEnd || p+len(old) == len(lines)) && matchAt(lines, p, old)
		}
		pos := -1
		for d := 0; ; d++ {
			lo, hi := want-d, want+d
			if lo < done && hi+len(old) > len(lines) {
				break
			}
			if hi+len(old) <= len(lines) && hi >= done && fits(hi) {
				pos = hi
				break
			}
			if d > 0 && lo >= done && lo+len(old) <= len(lines) && fits(lo) {
				pos = lo
				break
			}
		}
		if pos < 0 {
			// GNU patch reports a failed hunk where it would be in the
			// output so far: moved by the lines earlier hunks added, not
			// by the offset they were found at.
			shift := len(result) - done
			offsets[i+1] = shift
			at := h.oldStart + shift
			if h.oldLines == 0 {
				at++
			}
			fmt.Fprintf(out, "Hunk #%d FAILED at %d.\n", i+1, at)
			failed = append(failed, i+1)
			continue
		}
		base := h.oldStart - 1
		if h.oldLines == 0 {
			base = h.oldStart
		}
		if d := pos - base; d != 0 {
			moved = true
			fmt.Fprintf(out, "Hunk #%d succeeded at %d (offset %s).\n", i+1, pos+1+len(result)-done, plural(abs(d), "line"))
		}
		offset = pos - base
		result = append(result, lines[done:pos]...)
		result = append(result, nw...)
		done = pos + len(old)
	}
	result = append(result, lines[done:]...)
	return result, failed, offsets, moved
}

// contextCounts returns the number of context lines before the first
// change and after the last.
func contextCounts(h hunk) (lead, trail int) {
	for _, l := range h.lines {
		if l.op != ' ' {
			break
		}
		lead++
	}
	for i := len(h.lines) - 1; i >= 0 && h.lines[i].op == ' '; i-- {
		trail++
	}
	if lead == len(h.lines) {
		trail = lead
	}
	return lead, trail
}

// hunkApplies reports whether h matches lines anywhere it may.
func hunkApplies(lines []string, h hunk) bool {
	var old []string
	for _, l := range h.lines {
		if l.op != '+' {
			old = append(old, l.text)
		}
	}
	lead, trail := contextCounts(h)
	for pos := 0; pos+len(old) <= len(lines); pos++ {
		if lead < trail && pos != 0 || trail < lead && pos+len(old) != len(lines) {
			continue
		}
		if matchAt(lines, pos, old) {
			return true
		}
	}
	return false
}

// reverseHunk is h with its sides exchanged.
func reverseHunk(h hunk) hunk {
	r := h
	r.oldStart, r.newStart = h.newStart, h.oldStart
	r.oldLines, r.newLines = h.newLines, h.oldLines
	r.lines = make([]diffLine, len(h.lines))
	for j, l := range h.lines {
		switch l.op {
		case '-':
			l.op = '+'
		case '+':
			l.op = '-'
		}
		r.lines[j] = l
	}
	return r
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func matchAt(lines []string, pos int, old []string) bool {
	for i, l := range old {
		if lines[pos+i] != l {
			return false
		}
	}
	return true
}

// writeRejects saves the failed hunks in unified form, with the names
// as stripped and each hunk moved by the offset in force where it
// failed, as GNU patch writes them.
func writeRejects(rej string, fp *filePatch, strip int, failed []int, offsets map[int]int) error {
	var b strings.Builder
	header := func(prefix, name, ts string) {
		if s, ok := stripName(name, strip); ok {
			name = s
		}
		b.WriteString(prefix + name)
		if ts != "" {
			b.WriteString("\t" + ts)
		}
		b.WriteString("\n")
	}
	oldTime, newTime := fp.oldTime, fp.newTime
	if fp.reversed {
		oldTime, newTime = newTime, oldTime
	}
	header("--- ", fp.oldName, oldTime)
	header("+++ ", fp.newName, newTime)
	for _, n := range failed {
		h := fp.hunks[n-1]
		off := offsets[n]
		fmt.Fprintf(&b, "@@ -%s +%s @@", rangeText(h.oldStart+off, h.oldLines), rangeText(h.newStart+off, h.newLines))
		if h.section != "" {
			b.WriteString(" " + h.section)
		}
		b.WriteString("\n")
		// Each change is written with its removed lines first, and a
		// last line without its newline as it is: GNU patch's form.
		var minus, plus []diffLine
		flush := func() {
			for _, l := range append(minus, plus...) {
				b.WriteByte(l.op)
				b.WriteString(l.text)
			}
			minus, plus = minus[:0], plus[:0]
		}
		for _, l := range h.lines {
			switch l.op {
			case '-':
				minus = append(minus, l)
			case '+':
				plus = append(plus, l)
			default:
				flush()
				b.WriteByte(l.op)
				b.WriteString(l.text)
			}
		}
		flush()
	}
	if err := os.WriteFile(rej, []byte(b.String()), 0o644); err != nil {
		return fatalf("Can't create file %s : %s", rej, sysmsg.Text(err))
	}
	return nil
}

func rangeText(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
