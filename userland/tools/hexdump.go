package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/secexec/secexec/userland/internal/sysmsg"
)

// runHexdump is util-linux hexdump's default format (16-bit words in the
// host's little-endian order) and its -C canonical format, with -n, -s
// and -v. Files are dumped as one stream; repeated lines become "*".
func runHexdump(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, files, err := getopt(args[1:], "Cn:s:vbcdox", []string{"canonical", "length=", "skip=", "no-squeezing"})
	if err != nil {
		fmt.Fprintf(stderr, "hexdump: %s\nTry 'hexdump --help' for more information.\n", err)
		return 1
	}
	canonical, squeeze := false, true
	length, skip := int64(-1), int64(0)
	for _, o := range opts {
		switch o.name {
		case "C", "canonical":
			canonical = true
		case "v", "no-squeezing":
			squeeze = false
		case "n", "length", "s", "skip":
			v, err := parseSize(o.arg)
			if err != nil || v < 0 {
				fmt.Fprintf(stderr, "hexdump: failed to parse length: '%s'\n", o.arg)
				return 1
			}
			if o.name == "n" || o.name == "length" {
				length = v
			} else {
				skip = v
			}
		default:
			fmt.Fprintf(stderr, "hexdump: -%s is not supported here; use -C or the default format\n", o.name)
			return 1
		}
	}
	status := 0
	var readers []io.Reader
	if len(files) == 0 {
		readers = append(readers, stdin)
	}
	opened := 0
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(stderr, "hexdump: %s: %s\n", name, sysmsg.Text(err))
			status = 1
			continue
		}
		defer f.Close()
		opened++
		readers = append(readers, f)
	}
	if len(files) > 0 && opened == 0 {
		fmt.Fprintln(stderr, "hexdump: all input file arguments failed")
		return 1
	}
	r := io.MultiReader(readers...)
	if skip > 0 {
		// A skip past the end leaves the address at the end, as hexdump's.
		n, err := io.CopyN(io.Discard, r, skip)
		if err != nil && err != io.EOF {
			fmt.Fprintf(stderr, "hexdump: %s\n", sysmsg.Text(err))
			return 1
		}
		skip = n
	}
	if length >= 0 {
		r = io.LimitReader(r, length)
	}
	w := bufio.NewWriter(stdout)
	if err := hexdump(bufio.NewReader(r), w, canonical, squeeze, skip); err != nil {
		w.Flush()
		fmt.Fprintf(stderr, "hexdump: %s\n", sysmsg.Text(err))
		return 1
	}
	if err := w.Flush(); err != nil {
		return 1
	}
	return status
}

// parseSize reads hexdump's sizes: decimal, 0x hex or 0 octal, with an
// optional KiB/MiB style suffix.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "KB": 1000, "MB": 1000_000, "GB": 1000_000_000} {
		if len(s) > len(suffix) && s[len(s)-len(suffix):] == suffix {
			s, mult = s[:len(s)-len(suffix)], m
			break
		}
	}
	if s == "" {
		return 0, fmt.Errorf("empty size")
	}
	for i := 0; i < len(s); i++ {
		if hexVal(s[i]) < 0 && !(i == 1 && (s[i] == 'x' || s[i] == 'X')) {
			return 0, fmt.Errorf("bad size %q", s)
		}
	}
	v, err := parseCNumber(s)
	return v * mult, err
}

func hexdump(r io.Reader, w *bufio.Writer, canonical, squeeze bool, addr int64) error {
	var cur, prev [16]byte
	havePrev, starred := false, false
	for {
		n, err := io.ReadFull(r, cur[:])
		if n > 0 {
			if squeeze && n == 16 && havePrev && bytes.Equal(cur[:], prev[:]) {
				if !starred {
					w.WriteString("*\n")
					starred = true
				}
			} else {
				starred = false
				if canonical {
					fmt.Fprintf(w, "%08x ", addr)
					for i := 0; i < 16; i++ {
						if i == 8 {
							w.WriteByte(' ')
						}
						if i < n {
							fmt.Fprintf(w, " %02x", cur[i])
						} else {
							w.WriteString("   ")
						}
					}
					w.WriteString("  |")
					for _, b := range cur[:n] {
						if b < 0x20 || b > 0x7e {
							b = '.'
						}
						w.WriteByte(b)
					}
					w.WriteString("|\n")
				} else {
					fmt.Fprintf(w, "%07x", addr)
					for i := 0; i < 16; i += 2 {
						switch {
						case i+1 < n:
							fmt.Fprintf(w, " %04x", uint16(cur[i])|uint16(cur[i+1])<<8)
						case i < n:
							fmt.Fprintf(w, " %04x", cur[i])
						default:
							w.WriteString("     ")
						}
					}
					w.WriteByte('\n')
				}
			}
			prev, havePrev = cur, n == 16
			addr += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if addr > 0 {
		if canonical {
			fmt.Fprintf(w, "%08x\n", addr)
		} else {
			fmt.Fprintf(w, "%07x\n", addr)
		}
	}
	return nil
}
