package aospkg_test

import (
	"bytes"
	"errors"
	"strconv"
	"testing"

	"github.com/secexec/secexec/software/aospkg"
	"github.com/secexec/secexec/software/internal/aospkgtest"
)

type enc = aospkgtest.Enc

var (
	eRoot = aospkg.Entry{Path: "/", Kind: aospkg.KindDir, Mode: 0o40755}
	eBin  = aospkg.Entry{Path: "/bin", Kind: aospkg.KindDir, Mode: 0o40755, UID: 1000, GID: 1000}
	eFile = aospkg.Entry{Path: "/bin/a", Kind: aospkg.KindFile, Mode: 0o100755, Offset: 2, Size: 3}
	// archive stands in for chunk 3; the reader never parses it.
	archive = []byte("..abc...")
)

// manifestChunk encodes a schema 1 manifest whose commands list is written
// by cmds (nil: one command "a" -> "bin/a").
func manifestChunk(name string, provides func(*enc), cmds func(*enc)) []byte {
	e := new(enc)
	e.U16(1).Str(name).Str("1.0").Bool(false)
	if provides == nil {
		e.Bool(false)
	} else {
		e.Bool(true)
		provides(e)
	}
	if cmds == nil {
		e.Uint(1).Str("a").Str("bin/a")
	} else {
		cmds(e)
	}
	e.Uint(0).Bool(false)
	return e.B
}

func withManifest(m []byte) []byte {
	return aospkgtest.Container(m, aospkgtest.EncodeIndex([]aospkg.Entry{eRoot, eBin, eFile}), archive)
}

func withEntries(es ...aospkg.Entry) []byte {
	return aospkgtest.Container(manifestChunk("x", nil, nil), aospkgtest.EncodeIndex(es), archive)
}

func withIndex(ix []byte) []byte {
	return aospkgtest.Container(manifestChunk("x", nil, nil), ix, archive)
}

func cmdList(pairs ...string) func(*enc) {
	return func(e *enc) {
		e.Uint(uint64(len(pairs) / 2))
		for _, s := range pairs {
			e.Str(s)
		}
	}
}

func env(kv ...string) func(*enc) {
	return func(e *enc) {
		e.Uint(uint64(len(kv) / 2))
		for _, s := range kv {
			e.Str(s)
		}
		e.Uint(0) // no files
	}
}

// rawEntry writes an entry's fields up to, not including, its link target
// tag, so a test can write any tag and target after it.
func rawEntry(e *enc, path string, kind uint64, mode uint32) *enc {
	return e.Str(path).Uint(kind).U64(0).U64(0).U32(mode).U32(0).U32(0).U64(0)
}

func rootEntry(e *enc) { rawEntry(e, "/", 1, 0o40755).Bool(false) }

// rawEntries encodes an index chunk with one entry per writer.
func rawEntries(entries ...func(*enc)) []byte {
	e := new(enc).U16(1).Uint(uint64(len(entries)))
	for _, w := range entries {
		w(e)
	}
	return e.B
}

func with[T any](v T, f func(*T)) T { f(&v); return v }

func TestBaseIsValid(t *testing.T) {
	for name, b := range map[string][]byte{
		"manifest": withManifest(manifestChunk("x", env("K", "v"), cmdList("a", "bin/a", "b", "bin/a"))),
		"entries":  withEntries(eRoot, eBin, eFile),
	} {
		if _, err := aospkg.Open(bytes.NewReader(b), int64(len(b))); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	valid := withEntries(eRoot, eBin, eFile)
	hdr := func(version, flags uint16, ml, il uint32) []byte {
		return append(aospkgtest.Header(version, flags, ml, il), valid[16:]...)
	}
	ixHead := func(count uint64) *enc { return new(enc).U16(1).Uint(count) }
	rootThen := func(count uint64) *enc {
		e := ixHead(count)
		aospkgtest.EncodeEntry(e, eRoot)
		return e
	}
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, aospkg.ErrTruncated},
		{"short header", valid[:15], aospkg.ErrTruncated},
		{"bad magic", append([]byte("\x89AOX"), valid[4:]...), aospkg.ErrBadMagic},
		{"zip magic", append([]byte("PK\x03\x04"), valid[4:]...), aospkg.ErrBadMagic},
		{"version 0", hdr(0, 0, 1, 1), aospkg.ErrUnsupportedVersion},
		{"version 2", hdr(2, 0, 1, 1), aospkg.ErrUnsupportedVersion},
		{"flags", hdr(1, 1, 1, 1), aospkg.ErrUnsupportedFlags},
		{"huge manifest", hdr(1, 0, 1<<31, 1), aospkg.ErrTooLarge},
		{"huge index", hdr(1, 0, 1, 1<<31), aospkg.ErrTooLarge},
		{"chunks past EOF", hdr(1, 0, 1000, 1000), aospkg.ErrTruncated},
		{"chunks past EOF by one", hdr(1, 0, uint32(len(manifestChunk("x", nil, nil))), uint32(len(valid))), aospkg.ErrTruncated},
		{"empty manifest chunk", withManifest(nil), aospkg.ErrTruncated},
		{"manifest schema 0", withManifest(new(enc).U16(0).B), aospkg.ErrUnsupportedSchema},
		{"manifest schema 3", withManifest(new(enc).U16(3).Str("x").B), aospkg.ErrUnsupportedSchema},
		{"manifest cut in name", withManifest(new(enc).U16(1).Uint(5).Raw('a', 'b').B), aospkg.ErrOutOfRange},
		{"manifest cut after name", withManifest(new(enc).U16(1).Str("x").B), aospkg.ErrTruncated},
		{"varint overflow", withManifest(new(enc).U16(1).Raw(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f).B), aospkg.ErrOverflow},
		{"varint 11 bytes", withManifest(new(enc).U16(1).Raw(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00).B), aospkg.ErrOverflow},
		{"varint past end", withManifest(new(enc).U16(1).Raw(0x80, 0x80).B), aospkg.ErrTruncated},
		{"string length 2^40", withManifest(new(enc).U16(1).Uint(1 << 40).Raw('x').B), aospkg.ErrOutOfRange},
		{"string too long", withManifest(new(enc).U16(1).Str(string(bytes.Repeat([]byte("n"), 300))).B), aospkg.ErrTooLarge},
		{"manifest trailing byte", withManifest(append(manifestChunk("x", nil, nil), 0)), aospkg.ErrTrailingBytes},
		{"non-UTF-8 name", withManifest(manifestChunk("\xff\xfe", nil, nil)), aospkg.ErrBadUTF8},
		{"NUL in name", withManifest(manifestChunk("a\x00b", nil, nil)), aospkg.ErrBadString},
		{"empty name", withManifest(manifestChunk("", nil, nil)), aospkg.ErrBadName},
		{"name with slash", withManifest(manifestChunk("a/b", nil, nil)), aospkg.ErrBadName},
		{"name dotdot", withManifest(manifestChunk("..", nil, nil)), aospkg.ErrBadName},
		{"agent tag 2", withManifest(new(enc).U16(1).Str("x").Str("1").Raw(2).B), aospkg.ErrBadEnum},
		{"commands count 2^60", withManifest(manifestChunk("x", nil, func(e *enc) { e.Uint(1 << 60) })), aospkg.ErrOutOfRange},
		{"command with slash", withManifest(manifestChunk("x", nil, cmdList("a/b", "bin/a"))), aospkg.ErrBadName},
		{"command empty", withManifest(manifestChunk("x", nil, cmdList("", "bin/a"))), aospkg.ErrBadName},
		{"duplicate command", withManifest(manifestChunk("x", nil, cmdList("a", "bin/a", "a", "bin/a"))), aospkg.ErrDuplicate},
		{"entry absolute", withManifest(manifestChunk("x", nil, cmdList("a", "/bin/a"))), aospkg.ErrBadPath},
		{"entry dotdot", withManifest(manifestChunk("x", nil, cmdList("a", "../bin/a"))), aospkg.ErrBadPath},
		{"entry inner dotdot", withManifest(manifestChunk("x", nil, cmdList("a", "bin/../../a"))), aospkg.ErrBadPath},
		{"entry double slash", withManifest(manifestChunk("x", nil, cmdList("a", "bin//a"))), aospkg.ErrBadPath},
		{"entry dot", withManifest(manifestChunk("x", nil, cmdList("a", "."))), aospkg.ErrBadPath},
		{"entry NUL", withManifest(manifestChunk("x", nil, cmdList("a", "bin/a\x00"))), aospkg.ErrBadString},
		{"env duplicate key", withManifest(manifestChunk("x", env("K", "1", "K", "2"), nil)), aospkg.ErrDuplicate},
		{"env key with =", withManifest(manifestChunk("x", env("K=1", "2"), nil)), aospkg.ErrBadName},
		{"env empty key", withManifest(manifestChunk("x", env("", "2"), nil)), aospkg.ErrBadName},
		{"env count 2^62", withManifest(manifestChunk("x", func(e *enc) { e.Uint(1 << 62) }, nil)), aospkg.ErrOutOfRange},
		{"provides relative target", withManifest(manifestChunk("x", func(e *enc) { e.Uint(0).Uint(1).Str("share").Str("usr/share") }, nil)), aospkg.ErrBadPath},
		{"provides escaping source", withManifest(manifestChunk("x", func(e *enc) { e.Uint(0).Uint(1).Str("../etc").Str("/etc") }, nil)), aospkg.ErrBadPath},

		{"empty index chunk", withIndex(nil), aospkg.ErrTruncated},
		{"index schema 2", withIndex(new(enc).U16(2).Uint(0).B), aospkg.ErrUnsupportedSchema},
		{"no entries", withIndex(ixHead(0).B), aospkg.ErrBadEntry},
		{"entries count 2^63", withIndex(ixHead(1 << 63).B), aospkg.ErrOutOfRange},
		{"entries count one too many", withIndex(rootThen(2).B), aospkg.ErrOutOfRange},
		{"index trailing byte", withIndex(append(rootThen(1).B, 0)), aospkg.ErrTrailingBytes},
		{"entry cut short", withIndex(rootThen(1).B[:20]), aospkg.ErrOutOfRange},
		{"first entry not root", withEntries(eBin, eFile), aospkg.ErrBadEntry},
		{"root is a file", withEntries(with(eRoot, func(e *aospkg.Entry) { e.Kind, e.Mode = aospkg.KindFile, 0o100644 })), aospkg.ErrBadEntry},
		{"unsorted", withEntries(eRoot, eBin, eFile, with(eBin, func(e *aospkg.Entry) { e.Path = "/b" })), aospkg.ErrUnsorted},
		{"duplicate path", withEntries(eRoot, eBin, eFile, eFile), aospkg.ErrUnsorted},
		{"duplicate root", withEntries(eRoot, eRoot), aospkg.ErrUnsorted},
		{"missing parent", withEntries(eRoot, eFile), aospkg.ErrBadEntry},
		{"parent is a file", withEntries(eRoot, with(eFile, func(e *aospkg.Entry) { e.Path = "/bin" }), eFile), aospkg.ErrBadEntry},
		{"parent is a symlink", withEntries(eRoot, with(eBin, func(e *aospkg.Entry) { e.Kind, e.Mode, e.LinkTarget = aospkg.KindSymlink, 0o120777, "/" }), eFile), aospkg.ErrBadEntry},
		{"path dotdot", withEntries(eRoot, eBin, with(eFile, func(e *aospkg.Entry) { e.Path = "/bin/../a" })), aospkg.ErrBadPath},
		{"path double slash", withEntries(eRoot, eBin, with(eFile, func(e *aospkg.Entry) { e.Path = "/bin//a" })), aospkg.ErrBadPath},
		{"path trailing slash", withEntries(eRoot, eBin, with(eFile, func(e *aospkg.Entry) { e.Path = "/bin/a/" })), aospkg.ErrBadPath},
		{"path relative", withEntries(eRoot, with(eBin, func(e *aospkg.Entry) { e.Path = "bin" })), aospkg.ErrBadPath},
		{"path empty", withEntries(eRoot, with(eBin, func(e *aospkg.Entry) { e.Path = "" }), eBin, eFile), aospkg.ErrBadPath},
		{"path NUL", withEntries(eRoot, eBin, with(eFile, func(e *aospkg.Entry) { e.Path = "/bin/a\x00" })), aospkg.ErrBadString},
		{"path non-UTF-8", withEntries(eRoot, eBin, with(eFile, func(e *aospkg.Entry) { e.Path = "/bin/\xc0" })), aospkg.ErrBadUTF8},
		{"kind 3", withEntries(eRoot, eBin, with(eFile, func(e *aospkg.Entry) { e.Kind = 3 })), aospkg.ErrBadEnum},
		{"kind huge varint", withIndex(new(enc).U16(1).Uint(1).Str("/").Raw(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01).Raw(make([]byte, 40)...).B), aospkg.ErrBadEnum},
		{"target tag 2", withIndex(rawEntries(func(e *enc) { rawEntry(e, "/", 1, 0o40755).Raw(2) })), aospkg.ErrBadEnum},
		{"symlink without target", withIndex(rawEntries(rootEntry, func(e *enc) { rawEntry(e, "/bin", 2, 0o120777).Bool(false) })), aospkg.ErrBadEntry},
		{"target on file", withIndex(rawEntries(rootEntry, func(e *enc) { rawEntry(e, "/bin", 0, 0o100644).Bool(true).Str("x") })), aospkg.ErrBadEntry},
		{"target on dir", withIndex(rawEntries(rootEntry, func(e *enc) { rawEntry(e, "/bin", 1, 0o40755).Bool(true).Str("x") })), aospkg.ErrBadEntry},
		{"target cut short", withIndex(rawEntries(rootEntry, func(e *enc) { rawEntry(e, "/bin", 2, 0o120777).Bool(true).Uint(3) })), aospkg.ErrOutOfRange},
		{"symlink empty target", withEntries(eRoot, with(eBin, func(e *aospkg.Entry) { e.Kind, e.Mode = aospkg.KindSymlink, 0o120777 })), aospkg.ErrBadEntry},
		{"mode/kind mismatch", withEntries(eRoot, eBin, with(eFile, func(e *aospkg.Entry) { e.Mode = 0o40755 })), aospkg.ErrBadEntry},
		{"mode extra bits", withEntries(eRoot, eBin, with(eFile, func(e *aospkg.Entry) { e.Mode = 0o1100755 })), aospkg.ErrBadEntry},
		{"dir with data", withEntries(eRoot, with(eBin, func(e *aospkg.Entry) { e.Size = 1 }), eFile), aospkg.ErrBadEntry},
		{"data past EOF", withEntries(eRoot, eBin, with(eFile, func(e *aospkg.Entry) { e.Size = 7 })), aospkg.ErrOutOfRange},
		{"offset past EOF", withEntries(eRoot, eBin, with(eFile, func(e *aospkg.Entry) { e.Offset, e.Size = 9, 0 })), aospkg.ErrOutOfRange},
		{"offset+size overflow", withEntries(eRoot, eBin, with(eFile, func(e *aospkg.Entry) { e.Offset, e.Size = 2, ^uint64(0) })), aospkg.ErrOutOfRange},
		{"offset 2^63", withEntries(eRoot, eBin, with(eFile, func(e *aospkg.Entry) { e.Offset, e.Size = 1<<63, 1 })), aospkg.ErrOutOfRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := aospkg.Open(bytes.NewReader(tt.in), int64(len(tt.in)))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Open() error = %v, want %v", err, tt.want)
			}
			var fe *aospkg.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			if fe.Offset < 0 || fe.Offset > int64(len(tt.in)) {
				t.Errorf("offset %d outside input of %d bytes", fe.Offset, len(tt.in))
			}
		})
	}
}

func TestFormatErrorString(t *testing.T) {
	b := withEntries(eRoot, eBin, with(eFile, func(e *aospkg.Entry) { e.Size = 7 }))
	_, err := aospkg.Open(bytes.NewReader(b), int64(len(b)))
	var fe *aospkg.FormatError
	if !errors.As(err, &fe) {
		t.Fatal(err)
	}
	want := "aospkg: offset " + strconv.FormatInt(fe.Offset, 10) + ": out of range: \"/bin/a\": data [2, +7) beyond mount archive of 8 bytes"
	if err.Error() != want {
		t.Errorf("Error() = %q\nwant %q", err.Error(), want)
	}
}
