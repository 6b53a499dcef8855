package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/secexec/secexec/userland/internal/sysmsg"
)

// xxdOptions are xxd's settings (xxd 2022-01-14, the one Debian ships).
type xxdOptions struct {
	plain, include, revert, upper, capital bool
	cols, group, length                    int64 // -1: not given
	seek                                   int64
	seekGiven                              bool
	name                                   string
	nameGiven                              bool
}

const xxdUsage = `Usage:
       xxd [options] [infile [outfile]]
    or
       xxd -r [-s [-]offset] [-c cols] [-ps] [infile [outfile]]
Options (this xxd supports xxd 2022-01-14's -c -C -g -i -l -n -p -r -s -u):
    -C          capitalize variable names in C include file style (-i).
    -c cols     format <cols> octets per line. Default 16 (-i: 12, -ps: 30).
    -g bytes    number of octets per group in normal output. Default 2.
    -i          output in C include file style.
    -l len      stop after <len> octets.
    -n name     set the variable name used in C include output (-i).
    -ps         output in postscript plain hexdump style.
    -r          reverse operation: convert (or patch) hexdump into binary.
    -r -s off   revert with <off> added to file positions found in hexdump.
    -s [+][-]seek  start at <seek> bytes abs. (or +: rel.) infile offset.
    -u          use upper case hex letters.
`

// errXxdUsage asks for the usage text and exit status 1.
var errXxdUsage = errors.New("usage")

// parseXxdArgs follows xxd's own parser: options are matched by prefix
// ("-ps", "-plain" and "-postscript" are one option) and a value follows
// its letter or comes in the next argument.
func parseXxdArgs(args []string) (o xxdOptions, operands []string, err error) {
	o.cols, o.group, o.length = -1, -1, -1
	num := func(i *int, a string, letter string) (int64, error) {
		v := strings.TrimPrefix(a, "-"+letter)
		for _, long := range []string{"ols", "roup", "en", "eek", "ame"} {
			if strings.HasPrefix(v, long) && len(a) > 2 {
				v = v[len(long):]
				break
			}
		}
		if v == "" {
			if *i+1 >= len(args) {
				return 0, errXxdUsage
			}
			*i++
			v = args[*i]
		}
		return parseCNumber(v)
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "-" || !strings.HasPrefix(a, "-") {
			operands = append(operands, args[i:]...)
			break
		}
		if a == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		switch a[1] {
		case 'p':
			o.plain = true
		case 'i':
			o.include = true
		case 'r':
			o.revert = true
			if a == "-rp" || a == "-r-p" {
				o.plain = true
			}
		case 'u':
			o.upper = true
		case 'C':
			o.capital = true
		case 'c':
			if o.cols, err = num(&i, a, "c"); err != nil {
				return o, nil, err
			}
		case 'g':
			if o.group, err = num(&i, a, "g"); err != nil {
				return o, nil, err
			}
		case 'l':
			if o.length, err = num(&i, a, "l"); err != nil {
				return o, nil, err
			}
		case 's':
			if o.seek, err = num(&i, a, "s"); err != nil {
				return o, nil, err
			}
			o.seekGiven = true
		case 'n':
			v := strings.TrimPrefix(a, "-n")
			v = strings.TrimPrefix(v, "ame")
			if v == "" {
				if i+1 >= len(args) {
					return o, nil, errXxdUsage
				}
				i++
				v = args[i]
			}
			o.name, o.nameGiven = v, true
		default:
			return o, nil, errXxdUsage
		}
	}
	if len(operands) > 2 {
		return o, nil, errXxdUsage
	}
	return o, operands, nil
}

// parseCNumber reads a number the way strtol(s, NULL, 0) does: decimal,
// 0x hex or 0 octal, with an optional sign; trailing junk is ignored.
func parseCNumber(s string) (int64, error) {
	neg := false
	s = strings.TrimLeft(s, " \t")
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		base, s = 16, s[2:]
	case strings.HasPrefix(s, "0") && len(s) > 1:
		base, s = 8, s[1:]
	}
	end := 0
	for end < len(s) && hexVal(s[end]) >= 0 && hexVal(s[end]) < base {
		end++
	}
	if end == 0 {
		return 0, nil
	}
	v, err := strconv.ParseInt(s[:end], base, 64)
	if err != nil {
		return 0, fmt.Errorf("number %q: %w", s, err)
	}
	if neg {
		v = -v
	}
	return v, nil
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func runXxd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, operands, err := parseXxdArgs(args)
	if err != nil {
		fmt.Fprint(stderr, xxdUsage)
		return 1
	}
	if o.cols > 256 || (o.cols < 0 && o.cols != -1) {
		fmt.Fprintln(stderr, "xxd: invalid number of columns (max. 256).")
		return 1
	}
	in, inName := stdin, ""
	if len(operands) > 0 && operands[0] != "-" {
		f, err := os.Open(operands[0])
		if err != nil {
			fmt.Fprintf(stderr, "xxd: %s: %s\n", operands[0], sysmsg.Text(err))
			return 2
		}
		defer f.Close()
		in, inName = f, operands[0]
	}
	out := stdout
	var outFile *os.File
	if len(operands) > 1 && operands[1] != "-" {
		flags := os.O_WRONLY | os.O_CREATE
		if !o.revert {
			flags |= os.O_TRUNC
		}
		f, err := os.OpenFile(operands[1], flags, 0o666)
		if err != nil {
			fmt.Fprintf(stderr, "xxd: %s: %s\n", operands[1], sysmsg.Text(err))
			return 3
		}
		defer f.Close()
		out, outFile = f, f
	}
	if o.revert {
		cols := o.cols
		if cols <= 0 {
			cols = 16
			if o.plain {
				cols = 30
			}
		}
		w := &seekWriter{w: bufio.NewWriter(out), f: outFile}
		if err := xxdRevert(bufio.NewReader(in), w, int(cols), o.plain, o.seek); err != nil {
			w.w.Flush()
			fmt.Fprintf(stderr, "xxd: %s\n", err)
			if errors.Is(err, errSeekBackwards) {
				return 5
			}
			return 3
		}
		if err := w.w.Flush(); err != nil {
			fmt.Fprintf(stderr, "xxd: %s\n", sysmsg.Text(err))
			return 3
		}
		return 0
	}
	if o.seek != 0 {
		// The dump's addresses start where the seek landed.
		pos, err := skipInput(in, o.seek)
		if err != nil {
			fmt.Fprintln(stderr, "xxd: Sorry, cannot seek.")
			return 4
		}
		o.seek = pos
	}
	r := io.Reader(bufio.NewReader(in))
	if o.length >= 0 {
		r = io.LimitReader(r, o.length)
	}
	bw := bufio.NewWriter(out)
	switch {
	case o.plain:
		err = xxdPlain(r, bw, o)
	case o.include:
		err = xxdInclude(r, bw, o, inName)
	default:
		err = xxdDump(r, bw, o)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		fmt.Fprintf(stderr, "xxd: %s\n", sysmsg.Text(err))
		return 2
	}
	return 0
}

// skipInput moves past the first n bytes (or to n bytes before the end
// when n is negative), by seeking where the input allows it and by
// reading otherwise, and returns the position it reached.
func skipInput(in io.Reader, n int64) (int64, error) {
	if n < 0 {
		s, ok := in.(io.Seeker)
		if !ok {
			return 0, errors.New("cannot seek")
		}
		return s.Seek(n, io.SeekEnd)
	}
	if s, ok := in.(io.Seeker); ok {
		if _, err := s.Seek(n, io.SeekStart); err == nil {
			return n, nil
		}
	}
	// Past the end, xxd still counts addresses from the seek.
	if _, err := io.CopyN(io.Discard, in, n); err != nil && err != io.EOF {
		return 0, err
	}
	return n, nil
}

func hexDigits(upper bool) string {
	if upper {
		return "0123456789ABCDEF"
	}
	return "0123456789abcdef"
}

// xxdDump writes the default dump. Columns are placed the way xxd places
// them, so partial groups and the last line pad exactly as xxd's do.
func xxdDump(r io.Reader, w *bufio.Writer, o xxdOptions) error {
	cols := int(o.cols)
	if cols <= 0 {
		cols = 16
	}
	g := int(o.group)
	if g < 0 {
		g = 2
	}
	if g == 0 || g > cols {
		g = cols
	}
	hex := hexDigits(o.upper)
	grplen := 2*g + 1
	asciiCol := 12 + (grplen*cols-1)/g
	buf := make([]byte, cols)
	line := make([]byte, 0, asciiCol+cols+1)
	addr := o.seek
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			line = line[:0]
			line = fmt.Appendf(line, "%08x:", addr)
			for len(line) < asciiCol {
				line = append(line, ' ')
			}
			for p := 0; p < n; p++ {
				c := 10 + (grplen*p)/g
				line[c] = hex[buf[p]>>4]
				line[c+1] = hex[buf[p]&15]
			}
			for p := 0; p < n; p++ {
				b := buf[p]
				if b < 0x20 || b > 0x7e {
					b = '.'
				}
				line = append(line, b)
			}
			line = append(line, '\n')
			if _, err := w.Write(line); err != nil {
				return err
			}
			addr += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func xxdPlain(r io.Reader, w *bufio.Writer, o xxdOptions) error {
	cols := int(o.cols)
	if cols < 0 {
		cols = 30
	}
	hex := hexDigits(o.upper)
	var buf [4096]byte
	p := 0
	for {
		n, err := r.Read(buf[:])
		for _, b := range buf[:n] {
			w.WriteByte(hex[b>>4])
			w.WriteByte(hex[b&15])
			p++
			if cols > 0 && p == cols {
				w.WriteByte('\n')
				p = 0
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if p > 0 || cols == 0 {
		// xxd ends a partial last line (and the one unbounded line) too.
		if p > 0 {
			w.WriteByte('\n')
		}
	}
	return nil
}

// cName is xxd's variable name for a file: every character that is not a
// letter or digit becomes '_', a leading digit gets "__" in front.
func cName(s string, capital bool) string {
	var b strings.Builder
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		b.WriteString("__")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
		default:
			c = '_'
		}
		if capital && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

func xxdInclude(r io.Reader, w *bufio.Writer, o xxdOptions, inName string) error {
	cols := int(o.cols)
	if cols <= 0 {
		cols = 12
	}
	name := inName
	if o.nameGiven {
		name = o.name
	}
	if name != "" {
		fmt.Fprintf(w, "unsigned char %s[] = {\n", cName(name, o.capital))
	}
	x := "0x"
	if o.upper {
		x = "0X"
	}
	hex := hexDigits(o.upper)
	var buf [4096]byte
	var total int64
	for {
		n, err := r.Read(buf[:])
		for _, b := range buf[:n] {
			switch {
			case total == 0:
				w.WriteString("  ")
			case total%int64(cols) == 0:
				w.WriteString(",\n  ")
			default:
				w.WriteString(", ")
			}
			w.WriteString(x)
			w.WriteByte(hex[b>>4])
			w.WriteByte(hex[b&15])
			total++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if total > 0 {
		w.WriteByte('\n')
	}
	if name != "" {
		length := "_len"
		if o.capital {
			length = "_LEN"
		}
		fmt.Fprintf(w, "};\nunsigned int %s%s = %d;\n", cName(name, o.capital), length, total)
	}
	return nil
}

// errSeekBackwards is xxd -r's complaint about addresses that go back on
// an output it cannot seek.
var errSeekBackwards error = message("Sorry, cannot seek backwards.")

// seekWriter is xxd -r's output: a regular file is seeked to each
// address, anything else gets zeros for forward gaps.
type seekWriter struct {
	w   *bufio.Writer
	f   *os.File
	off int64
}

func (s *seekWriter) moveTo(target int64) error {
	if target == s.off {
		return nil
	}
	if s.f != nil {
		if err := s.w.Flush(); err != nil {
			return err
		}
		if _, err := s.f.Seek(target, io.SeekStart); err == nil {
			s.off = target
			return nil
		}
	}
	if target < s.off {
		return errSeekBackwards
	}
	for ; s.off < target; s.off++ {
		if err := s.w.WriteByte(0); err != nil {
			return err
		}
	}
	return nil
}

// xxdRevert turns a dump back into bytes with xxd's own rules: per line
// an address up to the first non-hex character, then at most cols bytes
// of hex pairs; two adjacent non-hex characters end a line's data. In
// plain (-p) mode whitespace is ignored and there are no addresses.
func xxdRevert(r *bufio.Reader, w *seekWriter, cols int, plain bool, base int64) error {
	n1, n2, n3 := -1, 0, 0
	p := cols
	ignoreGarbage := true
	var want int64
	skipLine := func() (byte, error) {
		for {
			c, err := r.ReadByte()
			if err != nil || c == '\n' {
				return c, err
			}
		}
	}
	for {
		c, err := r.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if c == '\r' {
			continue
		}
		if plain && (c == ' ' || c == '\n' || c == '\t') {
			continue
		}
		n3, n2 = n2, n1
		n1 = hexVal(c)
		if n1 == -1 && ignoreGarbage {
			continue
		}
		ignoreGarbage = false
		if !plain && p >= cols {
			if n1 < 0 {
				p = 0
				continue
			}
			want = want<<4 | int64(n1)
			if want > 1<<48 {
				return fmt.Errorf("address too large")
			}
			continue
		}
		if err := w.moveTo(base + want); err != nil {
			return err
		}
		if n2 >= 0 && n1 >= 0 {
			if err := w.w.WriteByte(byte(n2<<4 | n1)); err != nil {
				return err
			}
			w.off++
			want++
			n1 = -1
			if p++; !plain && p >= cols {
				if c, err = skipLine(); err == io.EOF {
					return nil
				}
			}
		} else if n1 < 0 && n2 < 0 && n3 < 0 {
			if c, err = skipLine(); err == io.EOF {
				return nil
			}
		}
		if c == '\n' {
			if !plain {
				want = 0
			}
			p = cols
			ignoreGarbage = true
		}
	}
}
