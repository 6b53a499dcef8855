package main

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/secexec/secexec/userland/internal/sysmsg"
)

// Info-ZIP zip's exit statuses.
const (
	zipErrNothing = 12 // nothing to do
	zipErrOpen    = 18 // a file could not be read
	zipErrWrite   = 15 // the archive could not be written
	zipErrArgs    = 16 // bad command line
)

// spillLimit is the size up to which an entry is compressed in memory;
// larger ones are compressed through a temporary file, so memory stays
// bounded whatever the input.
const spillLimit = 8 << 20

type zipOptions struct {
	recurse, quiet, junk bool
	level                int
}

// runZip is Info-ZIP zip 3.0 for its everyday uses: zip [-r] [-q] [-j]
// [-0..-9] ARCHIVE FILE..., adding to or updating an existing archive.
// It prints "adding:"/"updating:" lines; entries it compresses with Go's
// deflate, so percentages may differ from Info-ZIP's by a little.
func runZip(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, operands, err := getopt(args[1:], "rqjD0123456789", []string{"recurse-paths", "quiet", "junk-paths"})
	if err != nil {
		fmt.Fprintf(stderr, "\nzip error: Invalid command arguments (%s)\n", err)
		return zipErrArgs
	}
	o := zipOptions{level: 6}
	for _, op := range opts {
		switch op.name {
		case "r", "recurse-paths":
			o.recurse = true
		case "q", "quiet":
			o.quiet = true
		case "j", "junk-paths":
			o.junk = true
		case "D":
		default:
			o.level = int(op.name[0] - '0')
		}
	}
	if len(operands) == 0 {
		fmt.Fprintln(stderr, "\nzip error: Invalid command arguments (no archive name given; reading archives from standard input is not supported)")
		return zipErrArgs
	}
	archive := operands[0]
	if path.Ext(path.Base(archive)) == "" {
		archive += ".zip"
	}
	// Gather the entries to add, in command-line order, directories
	// walked in name order.
	type entry struct {
		name, src string
		info      fs.FileInfo
	}
	var entries []entry
	// The archive never goes into itself (zip -r o.zip .).
	self, _ := filepath.Abs(archive)
	for _, p := range operands[1:] {
		info, err := os.Lstat(p)
		if err != nil {
			// Info-ZIP prints its warnings and errors on standard output.
			fmt.Fprintf(stdout, "\tzip warning: name not matched: %s\n", p)
			continue
		}
		add := func(p string, info fs.FileInfo) {
			if abs, _ := filepath.Abs(p); abs == self || abs == self+".ztmp" {
				return
			}
			name := path.Clean(filepath.ToSlash(p))
			for strings.HasPrefix(name, "../") {
				name = name[3:]
			}
			name = strings.TrimLeft(name, "/")
			if o.junk {
				if info.IsDir() {
					return
				}
				name = path.Base(name)
			}
			if info.IsDir() {
				name += "/"
			}
			if name == "./" || name == "/" {
				return
			}
			entries = append(entries, entry{name, p, info})
		}
		if info.IsDir() && o.recurse {
			err := filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
				if err != nil {
					fmt.Fprintf(stderr, "\tzip warning: could not open for reading: %s\n", q)
					return nil
				}
				info, err := d.Info()
				if err != nil {
					return nil
				}
				add(q, info)
				return nil
			})
			if err != nil {
				fmt.Fprintf(stderr, "\nzip error: %s\n", sysmsg.Text(err))
				return zipErrOpen
			}
			continue
		}
		add(p, info)
	}
	if len(entries) == 0 {
		fmt.Fprintf(stdout, "\nzip error: Nothing to do! (%s)\n", archive)
		return zipErrNothing
	}
	// Existing entries are kept (copied raw) unless replaced.
	replaced := make(map[string]bool)
	for _, e := range entries {
		replaced[e.name] = true
	}
	var old *zip.ReadCloser
	if _, err := os.Stat(archive); err == nil {
		old, err = zip.OpenReader(archive)
		if err != nil {
			fmt.Fprintf(stderr, "\nzip error: Zip file structure invalid (%s)\n", archive)
			return 3
		}
		defer old.Close()
	}
	tmp := archive + ".ztmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		fmt.Fprintf(stderr, "\nzip I/O error: %s\n\nzip error: Could not create output file (%s)\n", sysmsg.Text(err), archive)
		return zipErrWrite
	}
	fail := func(code int, format string, a ...any) int {
		f.Close()
		os.Remove(tmp)
		fmt.Fprintf(stderr, format, a...)
		return code
	}
	zw := zip.NewWriter(f)
	existing := make(map[string]bool)
	if old != nil {
		for _, zf := range old.File {
			existing[zf.Name] = true
			if replaced[zf.Name] {
				continue
			}
			if err := zw.Copy(zf); err != nil {
				return fail(zipErrWrite, "\nzip error: copying %s: %s\n", zf.Name, sysmsg.Text(err))
			}
		}
	}
	for _, e := range entries {
		verb := "  adding"
		if existing[e.name] {
			verb = "updating"
		}
		method, pct, err := addZipEntry(zw, e.name, e.src, e.info, o.level)
		if err != nil {
			fmt.Fprintf(stderr, "\tzip warning: could not open for reading: %s\n", e.src)
			continue
		}
		if !o.quiet {
			fmt.Fprintf(stdout, "%s: %s (%s %d%%)\n", verb, e.name, method, pct)
		}
	}
	if err := zw.Close(); err != nil {
		return fail(zipErrWrite, "\nzip I/O error: %s\n", sysmsg.Text(err))
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		fmt.Fprintf(stderr, "\nzip I/O error: %s\n", sysmsg.Text(err))
		return zipErrWrite
	}
	if err := os.Rename(tmp, archive); err != nil {
		os.Remove(tmp)
		fmt.Fprintf(stderr, "\nzip I/O error: %s\n", sysmsg.Text(err))
		return zipErrWrite
	}
	return 0
}

// addZipEntry writes one entry, deflated if that makes it smaller and
// stored otherwise (Info-ZIP's rule), and returns the method's word and
// the space saved in percent.
func addZipEntry(zw *zip.Writer, name, src string, info fs.FileInfo, level int) (string, int, error) {
	hdr, err := zip.FileInfoHeader(info)
	if err != nil {
		return "", 0, err
	}
	hdr.Name = name
	hdr.Method = zip.Store
	if perm, ok := permOf(src, true); ok {
		// The permission bits, which WASI's stat leaves out.
		hdr.SetMode(info.Mode().Type() | perm)
	}
	if info.IsDir() || !info.Mode().IsRegular() {
		if info.Mode()&fs.ModeSymlink != 0 {
			// Info-ZIP follows symbolic links by default.
			if fi, err := os.Stat(src); err == nil && fi.Mode().IsRegular() {
				return addZipEntry(zw, name, src, fi, level)
			}
		}
		if !info.IsDir() {
			return "", 0, fmt.Errorf("%s: not a regular file", src)
		}
		hdr.CreatorVersion = hdr.CreatorVersion&0xff00 | 30
		hdr.ReaderVersion = 10
		hdr.UncompressedSize64, hdr.CompressedSize64, hdr.CRC32 = 0, 0, 0
		_, err := zw.CreateRaw(hdr)
		return "stored", 0, err
	}
	in, err := os.Open(src)
	if err != nil {
		return "", 0, err
	}
	defer in.Close()
	// Compress once to learn the size, into memory or a temporary file.
	var spill io.Writer
	var buf bytes.Buffer
	var tmpFile *os.File
	if info.Size() <= spillLimit {
		spill = &buf
	} else {
		tmpFile, err = os.CreateTemp("", "zip-entry-")
		if err != nil {
			return "", 0, err
		}
		defer os.Remove(tmpFile.Name())
		defer tmpFile.Close()
		spill = tmpFile
	}
	crc := crc32.NewIEEE()
	var csize countWriter
	csize.w = spill
	if level == 0 {
		level = flate.NoCompression
	}
	fw, err := flate.NewWriter(&csize, level)
	if err != nil {
		return "", 0, fmt.Errorf("deflate: %w", err)
	}
	usize, err := io.Copy(io.MultiWriter(fw, crc), in)
	if err != nil {
		return "", 0, err
	}
	if err := fw.Close(); err != nil {
		return "", 0, err
	}
	hdr.CRC32 = crc.Sum32()
	hdr.UncompressedSize64 = uint64(usize)
	deflate := level != flate.NoCompression && csize.n < usize
	var data io.Reader
	switch {
	case deflate && tmpFile != nil:
		if _, err := tmpFile.Seek(0, io.SeekStart); err != nil {
			return "", 0, err
		}
		data = tmpFile
	case deflate:
		data = &buf
	default:
		if _, err := in.Seek(0, io.SeekStart); err != nil {
			return "", 0, err
		}
		data = io.LimitReader(in, usize)
	}
	if deflate {
		hdr.Method = zip.Deflate
		hdr.CompressedSize64 = uint64(csize.n)
	} else {
		hdr.CompressedSize64 = uint64(usize)
	}
	// Info-ZIP's versions: made by 3.0 (Unix), needed 1.0 to extract a
	// stored entry and 2.0 a deflated one. CreateRaw leaves them as set.
	hdr.CreatorVersion = hdr.CreatorVersion&0xff00 | 30
	hdr.ReaderVersion = 10
	if deflate {
		hdr.ReaderVersion = 20
	}
	w, err := zw.CreateRaw(hdr)
	if err != nil {
		return "", 0, err
	}
	if _, err := io.Copy(w, data); err != nil {
		return "", 0, err
	}
	if !deflate {
		return "stored", 0, nil
	}
	return "deflated", zipPercent(usize, csize.n), nil
}

// zipPercent is the space saved, rounded as Info-ZIP rounds it.
func zipPercent(usize, csize int64) int {
	if usize == 0 {
		return 0
	}
	return int(((usize-csize)*100 + usize/2) / usize)
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
