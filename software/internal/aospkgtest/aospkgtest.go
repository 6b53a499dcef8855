// Package aospkgtest builds .aospkg containers for tests: a small BARE
// encoder, encoders for the manifest and index chunks, and a Build helper
// that lays files out in a real tar archive the way the upstream toolchain
// does. It writes whatever it is given, valid or not, so tests can also
// craft broken containers.
package aospkgtest

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/secexec/secexec/software/aospkg"
)

// Enc appends BARE values to B.
type Enc struct{ B []byte }

// Uint appends an unsigned LEB128 varint.
func (e *Enc) Uint(v uint64) *Enc { e.B = binary.AppendUvarint(e.B, v); return e }

// U16 appends a little-endian uint16.
func (e *Enc) U16(v uint16) *Enc { e.B = binary.LittleEndian.AppendUint16(e.B, v); return e }

// U32 appends a little-endian uint32.
func (e *Enc) U32(v uint32) *Enc { e.B = binary.LittleEndian.AppendUint32(e.B, v); return e }

// U64 appends a little-endian uint64.
func (e *Enc) U64(v uint64) *Enc { e.B = binary.LittleEndian.AppendUint64(e.B, v); return e }

// Bool appends a bool or optional tag.
func (e *Enc) Bool(v bool) *Enc {
	if v {
		e.B = append(e.B, 1)
	} else {
		e.B = append(e.B, 0)
	}
	return e
}

// Str appends a length-prefixed string.
func (e *Enc) Str(s string) *Enc { e.Uint(uint64(len(s))); e.B = append(e.B, s...); return e }

// Raw appends bytes as they are.
func (e *Enc) Raw(b ...byte) *Enc { e.B = append(e.B, b...); return e }

// Map appends a map<str><str> with keys in sorted order.
func (e *Enc) Map(m map[string]string) *Enc {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	e.Uint(uint64(len(keys)))
	for _, k := range keys {
		e.Str(k).Str(m[k])
	}
	return e
}

// EncodeManifest encodes chunk 1 with schema m.Schema (0 means 1).
func EncodeManifest(m aospkg.Manifest) []byte {
	schema := m.Schema
	if schema == 0 {
		schema = 1
	}
	e := new(Enc)
	e.U16(schema).Str(m.Name).Str(m.Version)
	if schema == 1 {
		e.Bool(m.Agent != nil)
		if a := m.Agent; a != nil {
			e.Str(a.ACPEntrypoint).Bool(a.Snapshot).Map(a.Env)
			e.Uint(uint64(len(a.LaunchArgs)))
			for _, s := range a.LaunchArgs {
				e.Str(s)
			}
		}
	}
	e.Bool(m.Provides != nil)
	if p := m.Provides; p != nil {
		e.Map(p.Env).Uint(uint64(len(p.Files)))
		for _, f := range p.Files {
			e.Str(f.Source).Str(f.Target)
		}
	}
	e.Uint(uint64(len(m.Commands)))
	for _, c := range m.Commands {
		e.Str(c.Command).Str(c.Entry)
	}
	e.Uint(uint64(len(m.ManPages)))
	for _, p := range m.ManPages {
		e.Str(p.Section).Str(p.Page)
	}
	if schema == 1 {
		e.Bool(m.SnapshotBundlePath != "")
		if m.SnapshotBundlePath != "" {
			e.Str(m.SnapshotBundlePath)
		}
	}
	return e.B
}

// EncodeEntry appends one index entry. A symlink's target is written when
// the kind is SYMLINK.
func EncodeEntry(e *Enc, x aospkg.Entry) {
	e.Str(x.Path).Uint(uint64(x.Kind)).U64(x.Offset).U64(x.Size).U32(x.Mode).U32(x.UID).U32(x.GID).U64(uint64(x.Mtime))
	e.Bool(x.Kind == aospkg.KindSymlink)
	if x.Kind == aospkg.KindSymlink {
		e.Str(x.LinkTarget)
	}
}

// EncodeIndex encodes chunk 2 (schema 1) with the entries in the given order.
func EncodeIndex(entries []aospkg.Entry) []byte {
	e := new(Enc)
	e.U16(1).Uint(uint64(len(entries)))
	for _, x := range entries {
		EncodeEntry(e, x)
	}
	return e.B
}

// Container joins a header (version 1, flags 0) and the three chunks.
func Container(manifest, index, archive []byte) []byte {
	b := Header(aospkg.Version, 0, uint32(len(manifest)), uint32(len(index)))
	b = append(b, manifest...)
	b = append(b, index...)
	return append(b, archive...)
}

// Header encodes a 16-byte container header.
func Header(version, flags uint16, manifestLen, indexLen uint32) []byte {
	b := []byte(aospkg.Magic)
	b = binary.LittleEndian.AppendUint16(b, version)
	b = binary.LittleEndian.AppendUint16(b, flags)
	b = binary.LittleEndian.AppendUint32(b, manifestLen)
	return binary.LittleEndian.AppendUint32(b, indexLen)
}

// File is one member for Build. Parent directories are added automatically.
type File struct {
	Path    string // absolute, e.g. "/bin/ls"
	Data    []byte
	Dir     bool
	Symlink string // target; makes the member a symlink
	Perm    uint32 // permission bits; 0 means 0o755
}

// Build returns a valid container holding files, with an index sorted by
// path and a GNU tar mount archive whose member data the index points at.
func Build(m aospkg.Manifest, files []File) []byte {
	byPath := map[string]File{"/": {Path: "/", Dir: true}}
	for _, f := range files {
		byPath[f.Path] = f
		for d := path.Dir(f.Path); d != "/"; d = path.Dir(d) {
			if _, ok := byPath[d]; !ok {
				byPath[d] = File{Path: d, Dir: true}
			}
		}
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	slices.Sort(paths)

	var archive bytes.Buffer
	tw := tar.NewWriter(&archive)
	entries := make([]aospkg.Entry, 0, len(paths))
	for _, p := range paths {
		f := byPath[p]
		perm := f.Perm
		if perm == 0 {
			perm = 0o755
		}
		e := aospkg.Entry{Path: p, Mode: perm, UID: 1000, GID: 1000, Mtime: 1784630458}
		if p == "/" {
			e.Kind, e.Mode, e.UID, e.GID, e.Mtime = aospkg.KindDir, 0o40755, 0, 0, 0
			entries = append(entries, e)
			continue
		}
		hdr := &tar.Header{Name: "." + p, Mode: int64(perm), Uid: 1000, Gid: 1000, Format: tar.FormatGNU}
		switch {
		case f.Dir:
			e.Kind, e.Mode = aospkg.KindDir, e.Mode|0o040000
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		case f.Symlink != "":
			e.Kind, e.Mode, e.LinkTarget = aospkg.KindSymlink, e.Mode|0o120000, f.Symlink
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, f.Symlink
		default:
			e.Kind, e.Mode, e.Size = aospkg.KindFile, e.Mode|0o100000, uint64(len(f.Data))
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.Data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			panic(err) // test helper: inputs are fixed by the test
		}
		// WriteHeader has written the header blocks (and the previous
		// member's padding), so the data starts here.
		e.Offset = uint64(archive.Len())
		if e.Kind == aospkg.KindFile {
			if _, err := tw.Write(f.Data); err != nil {
				panic(err)
			}
		}
		entries = append(entries, e)
	}
	if err := tw.Close(); err != nil {
		panic(err)
	}
	return Container(EncodeManifest(m), EncodeIndex(entries), archive.Bytes())
}

// WasmModule returns a minimal valid WebAssembly module (magic and version)
// followed by a custom section carrying tag, so tests get distinct modules.
func WasmModule(tag string) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	name := "secexec-test"
	payload := binary.AppendUvarint(nil, uint64(len(name)))
	payload = append(payload, name...)
	payload = append(payload, tag...)
	b = append(b, 0) // custom section id
	b = binary.AppendUvarint(b, uint64(len(payload)))
	return append(b, payload...)
}

// Commands is a convenience to build a manifest command list from names,
// each with entry "bin/<name>".
func Commands(names ...string) []aospkg.Command {
	out := make([]aospkg.Command, 0, len(names))
	for _, n := range names {
		out = append(out, aospkg.Command{Command: n, Entry: "bin/" + strings.TrimPrefix(n, "/")})
	}
	return out
}
