package main

import (
	"archive/zip"
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/secexec/secexec/userland/internal/sysmsg"
)

// Info-ZIP unzip's exit statuses.
const (
	unzipWarn     = 1
	unzipBadZip   = 9
	unzipNoMatch  = 11
	unzipErrArgs  = 10
	unzipErrWrite = 50
)

type unzipOptions struct {
	list, test, overwrite, never, quiet, pipe, junk bool
	dir                                             string
}

// runUnzip is Info-ZIP unzip 6.0's extraction (with -o, -n, -d DIR, -q,
// -j), -l listing, -t testing and -p piping, with its messages and exit statuses.
// Entry names are taken apart safely: absolute paths and ".." components
// are stripped, as unzip does, so nothing lands outside the target.
func runUnzip(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, operands, err := getopt(args[1:], "ltonqpjd:", nil)
	if err != nil {
		fmt.Fprintf(stderr, "unzip: %s\n", err)
		return unzipErrArgs
	}
	var o unzipOptions
	for _, op := range opts {
		switch op.name {
		case "l":
			o.list = true
		case "t":
			o.test = true
		case "o":
			o.overwrite = true
		case "n":
			o.never = true
		case "q":
			o.quiet = true
		case "p":
			o.pipe = true
		case "j":
			o.junk = true
		case "d":
			o.dir = op.arg
		}
	}
	if len(operands) == 0 {
		fmt.Fprintln(stderr, "UnZip 6.00 (secexec): usage: unzip [-lonqpj] [-d exdir] file[.zip] [list]")
		return 0
	}
	name := operands[0]
	patterns := operands[1:]
	archive := name
	if _, err := os.Stat(archive); err != nil {
		found := false
		for _, ext := range []string{".zip", ".ZIP"} {
			if _, err := os.Stat(name + ext); err == nil {
				archive, found = name+ext, true
				break
			}
		}
		if !found {
			fmt.Fprintf(stderr, "unzip:  cannot find or open %s, %s.zip or %s.ZIP.\n", name, name, name)
			return unzipBadZip
		}
	}
	zr, err := zip.OpenReader(archive)
	if !o.pipe && (!o.quiet || o.list) && !(o.test && o.quiet) {
		fmt.Fprintf(stdout, "Archive:  %s\n", archive)
	}
	if err != nil {
		fmt.Fprintf(stderr, "  End-of-central-directory signature not found.  Either this file is not\n"+
			"  a zipfile, or it constitutes one disk of a multi-part archive.  In the\n"+
			"  latter case the central directory and zipfile comment will be found on\n"+
			"  the last disk(s) of this archive.\n"+
			"unzip:  cannot find zipfile directory in one of %s or\n"+
			"        %s.zip, and cannot find %s.ZIP, period.\n", name, name, name)
		return unzipBadZip
	}
	defer zr.Close()
	matched := make([]bool, len(patterns))
	selected := func(n string) bool {
		if len(patterns) == 0 {
			return true
		}
		ok := false
		for i, p := range patterns {
			if p == n || wildMatch(p, n) {
				matched[i], ok = true, true
			}
		}
		return ok
	}
	status := 0
	switch {
	case o.list:
		listZip(zr, stdout, selected)
	case o.test:
		status = testZip(zr, archive, o.quiet, len(patterns) > 0, stdout, selected)
	default:
		status = extractZip(zr, o, stdin, stdout, stderr, selected)
	}
	for i, m := range matched {
		if !m {
			if !o.list {
				fmt.Fprintf(stderr, "caution: filename not matched:  %s\n", patterns[i])
			}
			status = max(status, unzipNoMatch)
		}
	}
	return status
}

func listZip(zr *zip.ReadCloser, stdout io.Writer, selected func(string) bool) {
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	w.WriteString("  Length      Date    Time    Name\n---------  ---------- -----   ----\n")
	var total uint64
	n := 0
	for _, f := range zr.File {
		if !selected(f.Name) {
			continue
		}
		// unzip shows the extended timestamp's mtime in local time when
		// the entry has one (zip writes it), else the DOS time. They
		// differ in the minute when zip rounded an odd :59 second up.
		t := msDosTime(f.ModifiedDate, f.ModifiedTime)
		if hasExtendedMtime(f.Extra) {
			t = f.Modified.In(time.Local).Format("2006-01-02 15:04")
		}
		fmt.Fprintf(w, "%9d  %s   %s\n", f.UncompressedSize64, t, f.Name)
		total += f.UncompressedSize64
		n++
	}
	files := "files"
	if n == 1 {
		files = "file"
	}
	fmt.Fprintf(w, "---------                     -------\n%9d                     %d %s\n", total, n, files)
}

// testZip is unzip -t: every selected entry is decompressed and its CRC
// checked.
func testZip(zr *zip.ReadCloser, archive string, quiet, some bool, stdout io.Writer, selected func(string) bool) int {
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	bad := false
	n := 0
	for _, f := range zr.File {
		if !selected(f.Name) {
			continue
		}
		n++
		err := copyEntry(f, io.Discard)
		switch {
		case err != nil:
			bad = true
			fmt.Fprintf(w, "    testing: %-22s  %s\n", f.Name, err)
		case !quiet:
			fmt.Fprintf(w, "    testing: %-22s   OK\n", f.Name)
		}
	}
	if bad {
		fmt.Fprintf(w, "At least one error was detected in %s.\n", archive)
		return 2
	}
	switch {
	case !some:
		fmt.Fprintf(w, "No errors detected in compressed data of %s.\n", archive)
	case n == 1:
		fmt.Fprintf(w, "No errors detected in %s for the 1 file tested.\n", archive)
	case n > 1:
		fmt.Fprintf(w, "No errors detected in %s for the %d files tested.\n", archive, n)
	}
	return 0
}

// hasExtendedMtime reports whether extra holds an extended timestamp
// field (0x5455) with its modification time.
func hasExtendedMtime(extra []byte) bool {
	for len(extra) >= 4 {
		id, size := binary.LittleEndian.Uint16(extra), int(binary.LittleEndian.Uint16(extra[2:]))
		extra = extra[4:]
		if size > len(extra) {
			return false
		}
		if id == 0x5455 && size >= 5 && extra[0]&1 != 0 {
			return true
		}
		extra = extra[size:]
	}
	return false
}

func msDosTime(date, tm uint16) string {
	return fmt.Sprintf("%04d-%02d-%02d %02d:%02d", int(date>>9)+1980, date>>5&0xf, date&0x1f, tm>>11, tm>>5&0x3f)
}

// wildMatch is unzip's pattern match: * and ? match any characters, '/'
// included, and [...] a class.
func wildMatch(pattern, name string) bool {
	var re strings.Builder
	re.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '*':
			re.WriteString("(?s:.*)")
		case '?':
			re.WriteString("(?s:.)")
		case '[':
			j := strings.IndexByte(pattern[i+1:], ']')
			if j < 0 {
				re.WriteString(regexp.QuoteMeta("["))
				continue
			}
			class := pattern[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			re.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		default:
			re.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	re.WriteString("$")
	m, err := regexp.MatchString(re.String(), name)
	return err == nil && m
}

// safeName strips what would put an entry outside the target directory.
func safeName(n string) string {
	parts := strings.Split(strings.ReplaceAll(n, "\\", "/"), "/")
	var keep []string
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			continue
		}
		keep = append(keep, p)
	}
	s := strings.Join(keep, "/")
	if strings.HasSuffix(n, "/") && s != "" {
		s += "/"
	}
	return s
}

func extractZip(zr *zip.ReadCloser, o unzipOptions, stdin io.Reader, stdout, stderr io.Writer, selected func(string) bool) int {
	status := 0
	answers := bufio.NewReader(stdin)
	all, none := o.overwrite, o.never
	for _, f := range zr.File {
		if !selected(f.Name) {
			continue
		}
		if o.pipe {
			if strings.HasSuffix(f.Name, "/") {
				continue
			}
			if err := copyEntry(f, stdout); err != nil {
				fmt.Fprintf(stderr, "unzip: %s: %s\n", f.Name, err)
				status = max(status, 2)
			}
			continue
		}
		name := safeName(f.Name)
		if strings.HasPrefix(f.Name, "/") {
			fmt.Fprintf(stderr, "warning:  stripped absolute path spec from %s\n", f.Name)
			status = max(status, unzipWarn)
		}
		if slices.Contains(strings.Split(strings.ReplaceAll(f.Name, "\\", "/"), "/"), "..") {
			fmt.Fprintf(stdout, "warning:  skipped \"../\" path component(s) in %s\n", f.Name)
			status = max(status, unzipWarn)
		}
		if o.junk {
			if strings.HasSuffix(name, "/") {
				continue
			}
			name = path.Base(name)
		}
		if name == "" {
			continue
		}
		shown := name
		if o.dir != "" {
			shown = path.Join(o.dir, name)
			if strings.HasSuffix(name, "/") {
				shown += "/"
			}
		}
		target := filepath.FromSlash(shown)
		if strings.HasSuffix(name, "/") {
			if _, err := os.Stat(target); err == nil {
				continue
			}
			if !o.quiet {
				fmt.Fprintf(stdout, "   creating: %s\n", shown)
			}
			if err := os.MkdirAll(target, 0o755); err != nil {
				fmt.Fprintf(stderr, "checkdir error:  cannot create %s\n                 %s\n", shown, sysmsg.Text(err))
				status = max(status, unzipErrWrite)
			}
			continue
		}
		if _, err := os.Lstat(target); err == nil && !all {
			if none {
				continue
			}
			fmt.Fprintf(stderr, "replace %s? [y]es, [n]o, [A]ll, [N]one, [r]ename: ", shown)
			line, err := answers.ReadString('\n')
			line = strings.TrimSpace(line)
			if err != nil && line == "" {
				fmt.Fprintf(stderr, " NULL\n(EOF or read error, treating as \"[N]one\" ...)\n")
				none = true
				status = max(status, unzipWarn)
				continue
			}
			switch line {
			case "y", "Y":
			case "A":
				all = true
			case "N":
				none = true
				continue
			default:
				continue
			}
		}
		if dir := filepath.Dir(target); dir != "." {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				fmt.Fprintf(stderr, "checkdir error:  cannot create %s\n                 %s\n", dir, sysmsg.Text(err))
				status = max(status, unzipErrWrite)
				continue
			}
		}
		if !o.quiet {
			verb := " extracting"
			if f.Method == zip.Deflate {
				verb = "  inflating"
			}
			fmt.Fprintf(stdout, "%s: %-22s  \n", verb, shown)
		}
		if err := extractFile(f, target); err != nil {
			fmt.Fprintf(stderr, "error:  cannot create %s\n        %s\n", shown, err)
			status = max(status, unzipErrWrite)
		}
	}
	return status
}

func copyEntry(f *zip.File, w io.Writer) error {
	r, err := f.Open()
	if err != nil {
		return fmt.Errorf("unsupported compression or damaged entry: %w", err)
	}
	defer r.Close()
	if _, err := io.Copy(w, r); err != nil {
		if errors.Is(err, zip.ErrChecksum) || errors.Is(err, zip.ErrFormat) {
			return fmt.Errorf("bad CRC or damaged data: %w", err)
		}
		return err
	}
	return nil
}

func extractFile(f *zip.File, target string) error {
	mode := f.Mode().Perm()
	if mode == 0 {
		mode = 0o644
	}
	os.Remove(target) // a symbolic link in the way is replaced, not followed
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return errors.New(sysmsg.Text(err))
	}
	if err := copyEntry(f, out); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return errors.New(sysmsg.Text(err))
	}
	os.Chtimes(target, f.Modified, f.Modified)
	if f.Mode().Perm() != 0 {
		// OpenFile's mode is not applied everywhere (WASI): set it.
		if err := chmod(target, mode); err != nil {
			return err
		}
	}
	return nil
}
