// Package aospkg reads agentOS package containers (.aospkg, format version
// 1): a 16-byte header, a BARE-encoded manifest, a BARE-encoded mount index,
// and a raw tar archive whose member data the index locates.
//
// The reader treats its input as hostile. [Open] validates the header, both
// chunks and every index entry before returning, bounds every count and
// length by the bytes that actually exist before allocating, and reports
// problems as a [*FormatError] wrapping one sentinel error. The mount
// archive (chunk 3) is never parsed: file bytes are read through the
// index's offsets, which Open has checked to lie inside the file.
//
// The byte layout is described in the agentOS WebAssembly ABI
// specification, sections 2.1 to 2.4.
package aospkg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/secexec/secexec/kernel/errno"
)

// Container constants.
const (
	// Magic starts every container.
	Magic = "\x89AOS"
	// HeaderSize is the size of the fixed header.
	HeaderSize = 16
	// Version is the only container format version this package reads.
	Version = 1
)

// Limits on the metadata chunks. The largest published package (coreutils)
// has a 1.8 KB manifest and a 5.8 KB index (about 42 bytes per entry); the
// limits leave room for packages with hundreds of thousands of files while
// bounding the memory Open uses to a few times the limit.
const (
	MaxManifestSize = 1 << 20
	MaxIndexSize    = 16 << 20
)

// Header is the decoded fixed header.
type Header struct {
	Version     uint16
	Flags       uint16
	ManifestLen uint32
	IndexLen    uint32
}

// Package is an opened, validated container. It is safe for concurrent use
// if the underlying io.ReaderAt is (an *os.File is).
type Package struct {
	r         io.ReaderAt
	closer    io.Closer
	size      int64
	header    Header
	mountBase int64
	manifest  Manifest
	entries   []Entry // sorted by Path, entries[0] is "/"
}

// Open reads and validates the container held in the first size bytes of r.
// Malformed input yields a *FormatError; errors from r itself are returned
// wrapped.
func Open(r io.ReaderAt, size int64) (*Package, error) {
	if size < HeaderSize {
		return nil, formatErr(max(size, 0), ErrTruncated, "header needs 16 bytes, file has "+strconv.FormatInt(size, 10))
	}
	var hb [HeaderSize]byte
	if err := readFull(r, hb[:], 0); err != nil {
		return nil, err
	}
	if string(hb[:4]) != Magic {
		return nil, formatErr(0, ErrBadMagic, fmt.Sprintf("% x", hb[:4]))
	}
	h := Header{
		Version:     binary.LittleEndian.Uint16(hb[4:]),
		Flags:       binary.LittleEndian.Uint16(hb[6:]),
		ManifestLen: binary.LittleEndian.Uint32(hb[8:]),
		IndexLen:    binary.LittleEndian.Uint32(hb[12:]),
	}
	if h.Version != Version {
		return nil, formatErr(4, ErrUnsupportedVersion, "version "+strconv.Itoa(int(h.Version)))
	}
	if h.Flags != 0 {
		return nil, formatErr(6, ErrUnsupportedFlags, "flags 0x"+strconv.FormatUint(uint64(h.Flags), 16))
	}
	if h.ManifestLen > MaxManifestSize {
		return nil, formatErr(8, ErrTooLarge, "manifest length "+strconv.FormatUint(uint64(h.ManifestLen), 10))
	}
	if h.IndexLen > MaxIndexSize {
		return nil, formatErr(12, ErrTooLarge, "index length "+strconv.FormatUint(uint64(h.IndexLen), 10))
	}
	mountBase := int64(HeaderSize) + int64(h.ManifestLen) + int64(h.IndexLen)
	if mountBase > size {
		return nil, formatErr(size, ErrTruncated, "chunks end at "+strconv.FormatInt(mountBase, 10)+" past end of file")
	}
	meta := make([]byte, h.ManifestLen+h.IndexLen)
	if err := readFull(r, meta, HeaderSize); err != nil {
		return nil, err
	}
	p := &Package{r: r, size: size, header: h, mountBase: mountBase}
	var err error
	md := &decoder{buf: meta[:h.ManifestLen], base: HeaderSize}
	if p.manifest, err = decodeManifest(md); err != nil {
		return nil, err
	}
	id := &decoder{buf: meta[h.ManifestLen:], base: HeaderSize + int64(h.ManifestLen)}
	if p.entries, err = decodeIndex(id, uint64(size-mountBase)); err != nil {
		return nil, err
	}
	return p, nil
}

// OpenFile opens and validates the container file at the host path name.
// Close the Package to close the file.
func OpenFile(name string) (*Package, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("aospkg: %s: not a regular file", name)
	}
	p, err := Open(f, fi.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	p.closer = f
	return p, nil
}

// readFull reads len(b) bytes at off, mapping a short read to ErrTruncated:
// the reader had fewer bytes than the size it was announced with.
func readFull(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return formatErr(off+int64(n), ErrTruncated, "short read")
	}
	return fmt.Errorf("aospkg: read at %d: %w", off, err)
}

// Close closes the file opened by OpenFile; for a Package from Open it does
// nothing (the caller owns the reader).
func (p *Package) Close() error {
	if p.closer == nil {
		return nil
	}
	return p.closer.Close()
}

// Header returns the decoded fixed header.
func (p *Package) Header() Header { return p.header }

// Size returns the container's size in bytes.
func (p *Package) Size() int64 { return p.size }

// MountBase returns the absolute offset of the mount archive (chunk 3).
func (p *Package) MountBase() int64 { return p.mountBase }

// Manifest returns a copy of the package manifest.
func (p *Package) Manifest() Manifest { return p.manifest.clone() }

// Name returns the manifest's package name.
func (p *Package) Name() string { return p.manifest.Name }

// Version returns the manifest's package version.
func (p *Package) Version() string { return p.manifest.Version }

// Commands returns a copy of the manifest's command list, in manifest order.
func (p *Package) Commands() []Command { return slices.Clone(p.manifest.Commands) }

// Entries returns a copy of the mount index, sorted by path; the first entry
// is the root directory.
func (p *Package) Entries() []Entry { return slices.Clone(p.entries) }

// cleanName turns a path as a caller may write it ("bin/ls", "/bin/ls",
// "/bin//ls") into the index's form. Relative names are relative to the
// package root, and ".." cannot climb above it.
func cleanName(name string) string {
	if !strings.HasPrefix(name, "/") {
		name = "/" + name
	}
	return path.Clean(name)
}

// Lookup returns the index entry for name (absolute, or relative to the
// package root). Symlinks are not followed.
func (p *Package) Lookup(name string) (Entry, bool) {
	name = cleanName(name)
	i, ok := slices.BinarySearchFunc(p.entries, name, func(e Entry, t string) int {
		return strings.Compare(e.Path, t)
	})
	if !ok {
		return Entry{}, false
	}
	return p.entries[i], true
}

// ReadDir returns the direct children of the directory name, sorted by
// path. Errors are *errno.PathError (ENOENT, ENOTDIR).
func (p *Package) ReadDir(name string) ([]Entry, error) {
	e, ok := p.Lookup(name)
	if !ok {
		return nil, errno.Path("readdir", name, errno.ENOENT)
	}
	if e.Kind != KindDir {
		return nil, errno.Path("readdir", name, errno.ENOTDIR)
	}
	prefix := e.Path
	if prefix != "/" {
		prefix += "/"
	}
	// Every path below the directory shares the prefix, and strings with a
	// common prefix are contiguous in sorted order.
	i, _ := slices.BinarySearchFunc(p.entries, prefix, func(e Entry, t string) int {
		return strings.Compare(e.Path, t)
	})
	var out []Entry
	for ; i < len(p.entries) && strings.HasPrefix(p.entries[i].Path, prefix); i++ {
		rest := p.entries[i].Path[len(prefix):]
		if rest != "" && !strings.Contains(rest, "/") {
			out = append(out, p.entries[i])
		}
	}
	return out, nil
}

// Open returns a reader over the data of the regular file name. Symlinks
// are not followed. Errors are *errno.PathError: ENOENT, EISDIR, or ELOOP
// for a symlink (as open(2) with O_NOFOLLOW reports).
func (p *Package) Open(name string) (*io.SectionReader, error) {
	e, ok := p.Lookup(name)
	if !ok {
		return nil, errno.Path("open", name, errno.ENOENT)
	}
	switch e.Kind {
	case KindDir:
		return nil, errno.Path("open", name, errno.EISDIR)
	case KindSymlink:
		return nil, errno.Path("open", name, errno.ELOOP)
	}
	// Open checked that Offset+Size fits inside the file, so neither the
	// sum nor the conversion can overflow.
	return io.NewSectionReader(p.r, p.mountBase+int64(e.Offset), int64(e.Size)), nil
}

// ReadFile returns the contents of the regular file name, with the same
// errors as Open; a read failure (the file shrank after Open) is EIO.
func (p *Package) ReadFile(name string) ([]byte, error) {
	sr, err := p.Open(name)
	if err != nil {
		return nil, err
	}
	b := make([]byte, sr.Size())
	if n, _ := sr.ReadAt(b, 0); n != len(b) {
		return nil, errno.Path("read", name, errno.EIO)
	}
	return b, nil
}
