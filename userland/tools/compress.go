package main

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	dsbzip2 "github.com/dsnet/compress/bzip2"
	"github.com/secexec/secexec/userland/internal/sysmsg"
	"github.com/ulikunitz/xz"
)

// codec is what bzip2 and xz have in common: a compressed format, its
// file suffixes and the wording of each program's messages.
type codec struct {
	name     string
	suffixes [][2]string // compressed suffix, original suffix
	magic    []byte
	compress func(w io.Writer, level int) (io.WriteCloser, error)
	// decompress reads one or more concatenated streams.
	decompress func(r io.Reader) (io.Reader, error)
}

var bzip2Codec = codec{
	name:     "bzip2",
	suffixes: [][2]string{{".bz2", ""}, {".bz", ""}, {".tbz2", ".tar"}, {".tbz", ".tar"}},
	magic:    []byte("BZh"),
	compress: func(w io.Writer, level int) (io.WriteCloser, error) {
		return dsbzip2.NewWriter(w, &dsbzip2.WriterConfig{Level: level})
	},
	// The standard library's reader is the well-trodden one and handles
	// concatenated streams as bzip2 does.
	decompress: func(r io.Reader) (io.Reader, error) { return bzip2.NewReader(r), nil },
}

var xzCodec = codec{
	name:     "xz",
	suffixes: [][2]string{{".xz", ""}, {".txz", ".tar"}},
	magic:    []byte{0xfd, '7', 'z', 'X', 'Z', 0},
	compress: func(w io.Writer, level int) (io.WriteCloser, error) {
		cfg := xz.WriterConfig{CheckSum: xz.CRC64}
		// xz's presets 0-6 use dictionaries of 256 KiB to 8 MiB; 7-9 (16
		// to 64 MiB) are capped at 8 MiB: this encoder's match finder
		// needs several bytes per dictionary byte, and a guest's memory
		// is bounded. Any xz decoder reads the result.
		dict := []int{256 << 10, 1 << 20, 2 << 20, 4 << 20, 4 << 20, 8 << 20, 8 << 20, 8 << 20, 8 << 20, 8 << 20}
		cfg.DictCap = dict[level]
		return cfg.NewWriter(w)
	},
	decompress: func(r io.Reader) (io.Reader, error) {
		if br, ok := r.(*bufio.Reader); ok {
			if err := checkXzDict(br); err != nil {
				return nil, err
			}
		}
		// Concatenated streams are allowed (multi-stream mode), as xz does.
		return xz.NewReader(r)
	},
}

// maxXzDict bounds the LZMA2 dictionary a stream may ask for: the decoder
// allocates all of it up front, and a crafted header can ask for 4 GiB.
// xz -9 uses 64 MiB.
const maxXzDict = 256 << 20

// errXzMemory is xz's wording for a stream that needs too much memory.
var errXzMemory error = message("Memory usage limit reached")

// checkXzDict looks at the first block's LZMA2 filter, which follows the
// 12-byte stream header, and refuses a dictionary over maxXzDict.
func checkXzDict(br *bufio.Reader) error {
	head, _ := br.Peek(12 + 1024)
	if len(head) < 14 || head[12] == 0 {
		return nil
	}
	size := (int(head[12]) + 1) * 4
	if len(head) < 12+size {
		return nil
	}
	block := head[13 : size+12]
	flags := block[0]
	p := 1
	skipVarint := func() bool {
		for p < len(block) {
			c := block[p]
			p++
			if c&0x80 == 0 {
				return true
			}
		}
		return false
	}
	if flags&0x40 != 0 && !skipVarint() {
		return nil
	}
	if flags&0x80 != 0 && !skipVarint() {
		return nil
	}
	nfilters := int(flags&3) + 1
	for i := 0; i < nfilters && p+2 < len(block); i++ {
		id := block[p]
		propsLen := int(block[p+1])
		if id == 0x21 && propsLen == 1 {
			b := block[p+2] & 0x3f
			if b > 40 {
				return nil // invalid: the decoder reports it
			}
			dict := int64(2|b&1) << (b/2 + 11)
			if dict > maxXzDict {
				return errXzMemory
			}
		}
		p += 2 + propsLen
	}
	return nil
}

type compressOptions struct {
	decompress, stdout, keep, force, quiet, test bool
	level                                        int
}

func runBzip2(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runCompressor(args, stdin, stdout, stderr, bzip2Codec)
}

func runXz(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runCompressor(args, stdin, stdout, stderr, xzCodec)
}

// runCompressor is bzip2 1.0.8 and xz 5.4: their options -d -z -c -k -f
// -q -t -1..-9 (xz's -T threads is accepted and ignored: one thread),
// their naming of output files and their messages and exit statuses.
func runCompressor(args []string, stdin io.Reader, stdout, stderr io.Writer, c codec) int {
	prog := path.Base(args[0])
	o := compressOptions{level: 9}
	if c.name == "xz" {
		o.level = 6
	}
	switch prog {
	case "bunzip2", "unxz":
		o.decompress = true
	case "bzcat", "xzcat":
		o.decompress, o.stdout = true, true
	}
	spec := "cdfkqtvzs0123456789"
	longs := []string{"stdout", "to-stdout", "decompress", "uncompress", "force", "keep", "quiet", "test", "verbose", "compress", "small", "fast", "best"}
	if c.name == "xz" {
		spec += "T:"
		longs = append(longs, "threads=")
	}
	opts, files, err := getopt(args[1:], spec, longs)
	if err != nil {
		if c.name == "bzip2" {
			fmt.Fprintf(stderr, "%s: %s\n   usage: %s [flags and input files in any order]\n", prog, err, prog)
		} else {
			fmt.Fprintf(stderr, "%s: %s\n%s: Try `%s --help' for more information.\n", prog, err, prog, prog)
		}
		return 1
	}
	for _, op := range opts {
		switch op.name {
		case "c", "stdout", "to-stdout":
			o.stdout = true
		case "d", "decompress", "uncompress":
			o.decompress = true
		case "z", "compress":
			o.decompress = false
		case "f", "force":
			o.force = true
		case "k", "keep":
			o.keep = true
		case "q", "quiet":
			o.quiet = true
		case "t", "test":
			o.test, o.decompress = true, true
		case "fast":
			o.level = 1
		case "best":
			o.level = 9
		case "T", "threads":
		default:
			if len(op.name) == 1 && op.name[0] >= '0' && op.name[0] <= '9' {
				o.level = int(op.name[0] - '0')
				if c.name == "bzip2" && o.level == 0 {
					o.level = 1
				}
			}
		}
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	status := 0
	raise := func(s int) {
		if s > status {
			status = s
		}
	}
	for _, f := range files {
		raise(compressOne(prog, f, o, c, stdin, stdout, stderr))
	}
	return status
}

// compressOne handles one operand and returns its exit status.
func compressOne(prog, name string, o compressOptions, c codec, stdin io.Reader, stdout, stderr io.Writer) int {
	isBzip := c.name == "bzip2"
	errStatus := 1
	if isBzip && o.decompress {
		errStatus = 2
	}
	display := name
	if name == "-" {
		display = "(stdin)"
	}
	notFormat := func() int {
		if isBzip {
			fmt.Fprintf(stderr, "%s: %s is not a bzip2 file.\n", prog, display)
			return 2
		}
		fmt.Fprintf(stderr, "%s: %s: File format not recognized\n", prog, display)
		return 1
	}
	var in io.Reader = stdin
	if name != "-" {
		fi, err := os.Stat(name)
		if err == nil && fi.IsDir() {
			if isBzip {
				fmt.Fprintf(stderr, "%s: Input file %s is a directory.\n", prog, name)
			} else {
				fmt.Fprintf(stderr, "%s: %s: Is a directory, skipping\n", prog, name)
				return 2
			}
			return 1
		}
		f, err := os.Open(name)
		if err != nil {
			if isBzip {
				fmt.Fprintf(stderr, "%s: Can't open input file %s: %s.\n", prog, name, sysmsg.Text(err))
			} else {
				fmt.Fprintf(stderr, "%s: %s: %s\n", prog, name, sysmsg.Text(err))
			}
			return 1
		}
		defer f.Close()
		in = f
	}
	br := bufio.NewReader(in)
	toStdout := o.stdout || name == "-"
	outName := ""
	if !toStdout && !o.test {
		if o.decompress {
			// The format is checked before the name, as xz does.
			if head, _ := br.Peek(len(c.magic)); !bytes.Equal(head, c.magic) && !isBzip {
				return notFormat()
			}
			base, ok := "", false
			for _, s := range c.suffixes {
				if strings.HasSuffix(name, s[0]) && len(name) > len(s[0]) {
					base, ok = strings.TrimSuffix(name, s[0])+s[1], true
					break
				}
			}
			if !ok {
				if !isBzip {
					fmt.Fprintf(stderr, "%s: %s: Filename has an unknown suffix, skipping\n", prog, name)
					return 2
				}
				base = name + ".out"
				fmt.Fprintf(stderr, "%s: Can't guess original name for %s -- using %s\n", prog, name, base)
			}
			outName = base
		} else {
			for _, s := range c.suffixes {
				if strings.HasSuffix(name, s[0]) {
					if isBzip {
						fmt.Fprintf(stderr, "%s: Input file %s already has %s suffix.\n", prog, name, s[0])
					} else {
						fmt.Fprintf(stderr, "%s: %s: File already has `%s' suffix, skipping\n", prog, name, s[0])
						return 2
					}
					return 1
				}
			}
			outName = name + c.suffixes[0][0]
		}
		if _, err := os.Lstat(outName); err == nil {
			if !o.force {
				if isBzip {
					fmt.Fprintf(stderr, "%s: Output file %s already exists.\n", prog, outName)
				} else {
					fmt.Fprintf(stderr, "%s: %s: File exists\n", prog, outName)
				}
				return 1
			}
			os.Remove(outName)
		}
	}
	var out io.Writer = stdout
	var outFile *os.File
	if outName != "" {
		f, err := os.OpenFile(outName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %s: %s\n", prog, outName, sysmsg.Text(err))
			return 1
		}
		outFile = f
		out = f
	}
	if o.test {
		out = io.Discard
	}
	bw := bufio.NewWriter(out)
	err := transcode(br, bw, o, c)
	if err == nil {
		err = bw.Flush()
	}
	if outFile != nil {
		if cerr := outFile.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		if outFile != nil {
			os.Remove(outName)
		}
		var fe formatError
		switch {
		case errors.As(err, &fe) && fe.notFormat:
			return notFormat()
		case errors.As(err, &fe):
			if isBzip {
				fmt.Fprintf(stderr, "%s: %s: data integrity (CRC) error in data\n", prog, display)
				return 2
			}
			fmt.Fprintf(stderr, "%s: %s: Compressed data is corrupt\n", prog, display)
			return 1
		case errors.Is(err, errXzMemory):
			fmt.Fprintf(stderr, "%s: %s: %s\n", prog, display, err)
		default:
			fmt.Fprintf(stderr, "%s: %s: %s\n", prog, display, sysmsg.Text(err))
		}
		return errStatus
	}
	if outName != "" && !o.keep && name != "-" {
		if fi, err := os.Stat(name); err == nil {
			os.Chtimes(outName, fi.ModTime(), fi.ModTime())
		}
		if perm, ok := permOf(name, true); ok {
			chmod(outName, perm)
		}
		if err := os.Remove(name); err != nil {
			fmt.Fprintf(stderr, "%s: %s: %s\n", prog, name, sysmsg.Text(err))
			return 1
		}
	}
	return 0
}

// formatError is bad compressed input: not the format at all, or
// damaged data.
type formatError struct {
	notFormat bool
	err       error
}

func (e formatError) Error() string { return e.err.Error() }
func (e formatError) Unwrap() error { return e.err }

// transcode compresses or decompresses in a stream, so memory stays
// bounded by the codec's own buffers whatever the input size.
func transcode(in *bufio.Reader, out io.Writer, o compressOptions, c codec) error {
	if !o.decompress {
		zw, err := c.compress(out, o.level)
		if err != nil {
			return fmt.Errorf("compressor: %w", err)
		}
		if _, err := io.Copy(zw, in); err != nil {
			return err
		}
		return zw.Close()
	}
	head, _ := in.Peek(len(c.magic))
	if !bytes.Equal(head, c.magic) {
		return formatError{notFormat: true, err: errors.New("not compressed data")}
	}
	zr, err := c.decompress(in)
	if errors.Is(err, errXzMemory) {
		return err
	}
	if err != nil {
		return formatError{err: err}
	}
	if _, err := io.Copy(out, &readErrMarker{zr}); err != nil {
		var re readErr
		if errors.As(err, &re) {
			return formatError{err: re.err}
		}
		return err
	}
	return nil
}

// readErr tags an error from the decoder (damaged data) apart from one
// writing the output.
type readErr struct{ err error }

func (e readErr) Error() string { return e.err.Error() }

type readErrMarker struct{ r io.Reader }

func (m *readErrMarker) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	if err != nil && err != io.EOF {
		err = readErr{err}
	}
	return n, err
}
