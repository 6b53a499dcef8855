// Package term is what secexec's full-screen userland programs (less,
// more, vi) need of a terminal besides its modes (userland/tools sets
// those with host_tty's get_attr and set_attr): keys decoded from the
// bytes a VT100 or xterm sends, the window size from LINES and COLUMNS
// when the terminal does not say, and the controlling terminal as
// standard input for a program reading a pipe. Output is plain ANSI
// sequences written by the caller.
package term

import (
	"io"
	"os"
	"strconv"
	"unicode/utf8"
)

// Key is one key press: a character (its rune, control characters
// included, e.g. 0x1b for Escape and '\r' for Enter) or one of the
// special keys below, which are negative so they never collide with a
// rune.
type Key rune

// The special keys a terminal sends as escape sequences.
const (
	KeyUp Key = -1 - iota
	KeyDown
	KeyRight
	KeyLeft
	KeyHome
	KeyEnd
	KeyPgUp
	KeyPgDn
	KeyDelete
	KeyInsert
)

// Esc is the Escape key.
const Esc Key = 0x1b

// Ctrl returns the key that Control with letter c sends.
func Ctrl(c byte) Key { return Key(c & 0x1f) }

// Parse decodes one chunk of terminal input into keys. A terminal writes
// an escape sequence in one piece, so an Escape at the end of a chunk, or
// one not followed by a sequence this package knows, is the Escape key
// itself; unknown complete sequences (function keys, mouse reports) are
// dropped. Invalid UTF-8 bytes come out one key per byte.
func Parse(b []byte) []Key {
	keys := make([]Key, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if c == 0x1b && i+2 < len(b) && (b[i+1] == '[' || b[i+1] == 'O') {
			if k, n, ok := sequence(b[i:]); ok {
				if k != 0 {
					keys = append(keys, k)
				}
				i += n
				continue
			}
		}
		if c < 0x80 {
			keys = append(keys, Key(c))
			i++
			continue
		}
		r, n := decodeRune(b[i:])
		keys = append(keys, r)
		i += n
	}
	return keys
}

// sequence decodes the escape sequence at the start of b (which starts
// with ESC [ or ESC O and has at least three bytes): the key (0 for a
// sequence to drop), its length, and whether it is a sequence at all.
func sequence(b []byte) (Key, int, bool) {
	if b[1] == 'O' {
		switch b[2] {
		case 'A', 'B', 'C', 'D', 'H', 'F':
			return finalKey(b[2]), 3, true
		case 'P', 'Q', 'R', 'S':
			return 0, 3, true
		}
		return 0, 0, false
	}
	// CSI: parameter bytes, intermediate bytes, one final byte.
	i := 2
	for i < len(b) && b[i] >= 0x30 && b[i] <= 0x3f {
		i++
	}
	for i < len(b) && b[i] >= 0x20 && b[i] <= 0x2f {
		i++
	}
	if i >= len(b) || b[i] < 0x40 || b[i] > 0x7e {
		return 0, 0, false
	}
	params := string(b[2:i])
	if b[i] == '~' {
		switch params {
		case "1", "7":
			return KeyHome, i + 1, true
		case "4", "8":
			return KeyEnd, i + 1, true
		case "2":
			return KeyInsert, i + 1, true
		case "3":
			return KeyDelete, i + 1, true
		case "5":
			return KeyPgUp, i + 1, true
		case "6":
			return KeyPgDn, i + 1, true
		}
		return 0, i + 1, true
	}
	return finalKey(b[i]), i + 1, true
}

func finalKey(c byte) Key {
	switch c {
	case 'A':
		return KeyUp
	case 'B':
		return KeyDown
	case 'C':
		return KeyRight
	case 'D':
		return KeyLeft
	case 'H':
		return KeyHome
	case 'F':
		return KeyEnd
	}
	return 0
}

// decodeRune decodes a UTF-8 sequence; an invalid byte is a key of its own
// (its value as a rune in 0x80..0xff).
func decodeRune(b []byte) (Key, int) {
	r, n := utf8.DecodeRune(b)
	if r == utf8.RuneError && n <= 1 {
		return Key(b[0]), 1
	}
	return Key(r), n
}

// Reader reads keys from a terminal (or any byte stream).
type Reader struct {
	r       io.Reader
	pending []Key
	buf     [256]byte
}

// NewReader returns a Reader of the keys in r.
func NewReader(r io.Reader) *Reader { return &Reader{r: r} }

// Buffered is the number of keys already read and decoded: a program
// draws its screen only when none are left (a paste is one redraw).
func (k *Reader) Buffered() int { return len(k.pending) }

// ReadKey returns the next key; at the end of the input it returns
// io.EOF.
func (k *Reader) ReadKey() (Key, error) {
	for len(k.pending) == 0 {
		n, err := k.r.Read(k.buf[:])
		if n > 0 {
			k.pending = Parse(k.buf[:n])
			continue
		}
		if err == nil {
			err = io.EOF
		}
		return 0, err
	}
	key := k.pending[0]
	k.pending = k.pending[1:]
	return key, nil
}

// Size returns a window size in rows and columns from LINES and COLUMNS
// when they hold positive numbers, else 24 by 80, a VT100's.
func Size() (rows, cols int) {
	rows, cols = 24, 80
	if n, err := strconv.Atoi(os.Getenv("LINES")); err == nil && n > 0 && n < 10000 {
		rows = n
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 && n < 10000 {
		cols = n
	}
	return rows, cols
}
