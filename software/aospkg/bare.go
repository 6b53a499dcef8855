package aospkg

import (
	"encoding/binary"
	"strconv"
	"strings"
	"unicode/utf8"
)

// decoder reads BARE values from one chunk held in memory. Every read is
// bounds-checked against the chunk, and every count is checked against the
// bytes that remain before anything is allocated, so a hostile chunk cannot
// make the reader allocate more than a small multiple of its own size.
type decoder struct {
	buf  []byte
	off  int
	base int64 // absolute file offset of buf[0], for error positions
}

func (d *decoder) pos() int64 { return d.base + int64(d.off) }

func (d *decoder) remaining() int { return len(d.buf) - d.off }

func (d *decoder) fail(sentinel error, reason string) error {
	return formatErr(d.pos(), sentinel, reason)
}

func (d *decoder) need(n int, what string) error {
	if n > d.remaining() {
		return d.fail(ErrTruncated, what)
	}
	return nil
}

// uint reads an unsigned LEB128 varint (BARE `uint`).
func (d *decoder) uint(what string) (uint64, error) {
	var v uint64
	for i := 0; ; i++ {
		if d.off >= len(d.buf) {
			return 0, d.fail(ErrTruncated, what)
		}
		b := d.buf[d.off]
		// The tenth byte may only contribute the top bit of a uint64.
		if i == 9 && b > 1 {
			return 0, d.fail(ErrOverflow, what)
		}
		d.off++
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return v, nil
		}
	}
}

func (d *decoder) u16(what string) (uint16, error) {
	if err := d.need(2, what); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint16(d.buf[d.off:])
	d.off += 2
	return v, nil
}

func (d *decoder) u32(what string) (uint32, error) {
	if err := d.need(4, what); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint32(d.buf[d.off:])
	d.off += 4
	return v, nil
}

func (d *decoder) u64(what string) (uint64, error) {
	if err := d.need(8, what); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint64(d.buf[d.off:])
	d.off += 8
	return v, nil
}

func (d *decoder) i64(what string) (int64, error) {
	v, err := d.u64(what)
	return int64(v), err
}

// tag reads a one-byte bool or optional tag, which must be 0 or 1.
func (d *decoder) tag(what string) (bool, error) {
	if err := d.need(1, what); err != nil {
		return false, err
	}
	b := d.buf[d.off]
	if b > 1 {
		return false, d.fail(ErrBadEnum, what+": tag "+strconv.Itoa(int(b)))
	}
	d.off++
	return b == 1, nil
}

// enum reads an enum ordinal and checks it is below n.
func (d *decoder) enum(n uint64, what string) (uint64, error) {
	start := d.off
	v, err := d.uint(what)
	if err != nil {
		return 0, err
	}
	if v >= n {
		d.off = start
		return 0, d.fail(ErrBadEnum, what+": "+strconv.FormatUint(v, 10))
	}
	return v, nil
}

// str reads a length-prefixed UTF-8 string of at most max bytes. NUL bytes
// are rejected everywhere: every string in a package ends up as a path,
// name, argument or environment entry, none of which can carry one.
func (d *decoder) str(max int, what string) (string, error) {
	start := d.off
	n, err := d.uint(what)
	if err != nil {
		return "", err
	}
	if n > uint64(d.remaining()) {
		d.off = start
		return "", d.fail(ErrOutOfRange, what+": length "+strconv.FormatUint(n, 10)+" exceeds chunk")
	}
	if n > uint64(max) {
		d.off = start
		return "", d.fail(ErrTooLarge, what+": length "+strconv.FormatUint(n, 10))
	}
	b := d.buf[d.off : d.off+int(n)]
	if !utf8.Valid(b) {
		return "", d.fail(ErrBadUTF8, what)
	}
	if strings.IndexByte(string(b), 0) >= 0 {
		return "", d.fail(ErrBadString, what)
	}
	d.off += int(n)
	return string(b), nil
}

// count reads a list or map length and bounds it by the bytes left: each
// item occupies at least minItem bytes, so a larger count cannot be genuine.
func (d *decoder) count(minItem int, what string) (int, error) {
	start := d.off
	n, err := d.uint(what)
	if err != nil {
		return 0, err
	}
	if n > uint64(d.remaining()/minItem) {
		d.off = start
		return 0, d.fail(ErrOutOfRange, what+": count "+strconv.FormatUint(n, 10)+" exceeds chunk")
	}
	return int(n), nil
}

// strMap reads a BARE map<str><str>. Duplicate keys are rejected: which
// value would win is otherwise up to the reader.
func (d *decoder) strMap(what string, checkKey func(string) bool) (map[string]string, error) {
	n, err := d.count(2, what)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, n)
	for range n {
		at := d.off
		k, err := d.str(maxStringLen, what+" key")
		if err != nil {
			return nil, err
		}
		if checkKey != nil && !checkKey(k) {
			d.off = at
			return nil, d.fail(ErrBadName, what+" key "+strconv.Quote(k))
		}
		v, err := d.str(maxStringLen, what+" value")
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			d.off = at
			return nil, d.fail(ErrDuplicate, what+" key "+strconv.Quote(k))
		}
		m[k] = v
	}
	return m, nil
}

// strList reads a BARE list<str>.
func (d *decoder) strList(what string) ([]string, error) {
	n, err := d.count(1, what)
	if err != nil {
		return nil, err
	}
	l := make([]string, 0, n)
	for range n {
		s, err := d.str(maxStringLen, what)
		if err != nil {
			return nil, err
		}
		l = append(l, s)
	}
	return l, nil
}

// end checks that the chunk was consumed exactly.
func (d *decoder) end(what string) error {
	if d.off != len(d.buf) {
		return d.fail(ErrTrailingBytes, what+": "+strconv.Itoa(d.remaining())+" bytes left")
	}
	return nil
}
