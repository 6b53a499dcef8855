package aospkg

import (
	"errors"
	"strconv"
)

// Sentinel errors. Every malformed-input error returned by [Open] is a
// [*FormatError] that wraps exactly one of these, so callers can test the
// cause with errors.Is and the position with errors.As.
var (
	// ErrBadMagic: the file does not start with "\x89AOS".
	ErrBadMagic = errors.New("bad magic")
	// ErrUnsupportedVersion: the container format version is not 1.
	ErrUnsupportedVersion = errors.New("unsupported container version")
	// ErrUnsupportedFlags: the header flags are not zero.
	ErrUnsupportedFlags = errors.New("unsupported header flags")
	// ErrUnsupportedSchema: a chunk's u16 schema version is unknown.
	ErrUnsupportedSchema = errors.New("unsupported chunk schema")
	// ErrTruncated: the input ends inside a header, chunk or value.
	ErrTruncated = errors.New("truncated")
	// ErrTrailingBytes: a chunk holds bytes after its one value.
	ErrTrailingBytes = errors.New("trailing bytes in chunk")
	// ErrOutOfRange: a length, count or data range points outside the
	// bytes that exist (or overflows while computing it).
	ErrOutOfRange = errors.New("out of range")
	// ErrOverflow: a varint does not fit in 64 bits.
	ErrOverflow = errors.New("varint overflows 64 bits")
	// ErrTooLarge: a chunk or string exceeds the reader's fixed limits.
	ErrTooLarge = errors.New("too large")
	// ErrBadUTF8: a string is not valid UTF-8.
	ErrBadUTF8 = errors.New("string is not valid UTF-8")
	// ErrBadString: a string contains a NUL byte, which no path, name,
	// argument or environment value can carry.
	ErrBadString = errors.New("string contains NUL")
	// ErrBadPath: a path is empty, not clean, or absolute where it must be
	// relative (or the reverse).
	ErrBadPath = errors.New("invalid path")
	// ErrBadName: a package, command or environment name is not usable.
	ErrBadName = errors.New("invalid name")
	// ErrBadEnum: an enum ordinal, bool or optional tag is out of range.
	ErrBadEnum = errors.New("enum or tag out of range")
	// ErrUnsorted: index entries are not strictly sorted by path (this
	// includes duplicate paths).
	ErrUnsorted = errors.New("index not sorted or has duplicate paths")
	// ErrDuplicate: a command name or map key occurs twice.
	ErrDuplicate = errors.New("duplicate key")
	// ErrBadEntry: an index entry is inconsistent: kind and mode disagree,
	// a directory or symlink has data, a symlink has no target, a target is
	// set on a non-symlink, the root is missing, or a parent directory is
	// missing.
	ErrBadEntry = errors.New("invalid index entry")
)

// FormatError reports malformed container bytes. Offset is the absolute byte
// offset in the container where the problem was detected.
type FormatError struct {
	Offset int64
	Reason string
	Err    error // one of the sentinel errors above
}

// Error formats the error with its position.
func (e *FormatError) Error() string {
	s := "aospkg: offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Err.Error()
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Unwrap returns the sentinel so errors.Is works.
func (e *FormatError) Unwrap() error { return e.Err }

func formatErr(off int64, sentinel error, reason string) error {
	return &FormatError{Offset: off, Reason: reason, Err: sentinel}
}
