package aospkg

import (
	"io/fs"
	"path"
	"strconv"
)

// Kind is the type of an index entry.
type Kind uint8

// Entry kinds, in their on-disk ordinal order.
const (
	KindFile    Kind = 0
	KindDir     Kind = 1
	KindSymlink Kind = 2
)

// String returns "FILE", "DIRECTORY" or "SYMLINK".
func (k Kind) String() string {
	switch k {
	case KindFile:
		return "FILE"
	case KindDir:
		return "DIRECTORY"
	case KindSymlink:
		return "SYMLINK"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

func (k Kind) modeType() uint32 {
	switch k {
	case KindFile:
		return modeReg
	case KindDir:
		return modeDir
	}
	return modeSymlink
}

// st_mode type bits, as stored in Entry.Mode.
const (
	modeTypeMask = 0o170000
	modeReg      = 0o100000
	modeDir      = 0o040000
	modeSymlink  = 0o120000
)

// Entry is one member of the mount index (chunk 2).
type Entry struct {
	// Path is the clean absolute path inside the package root ("/bin/ls").
	Path string
	Kind Kind
	// Offset is where the data starts, relative to the mount archive
	// (chunk 3). Only meaningful for files.
	Offset uint64
	// Size is the data length; 0 for directories and symlinks.
	Size uint64
	// Mode is the full st_mode, type bits included (0o100755).
	Mode uint32
	UID  uint32
	GID  uint32
	// Mtime is in seconds since the Unix epoch.
	Mtime int64
	// LinkTarget is the symlink target; "" for other kinds.
	LinkTarget string
}

// FileMode converts Mode to an io/fs mode.
func (e Entry) FileMode() fs.FileMode {
	m := fs.FileMode(e.Mode & 0o777)
	switch e.Kind {
	case KindDir:
		m |= fs.ModeDir
	case KindSymlink:
		m |= fs.ModeSymlink
	}
	if e.Mode&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if e.Mode&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if e.Mode&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// minEntryLen is the encoded size of the smallest possible entry: a
// one-byte path, kind, offset, size, mode, uid, gid, mtime, absent target.
const minEntryLen = 2 + 1 + 8 + 8 + 4 + 4 + 4 + 8 + 1

// decodeIndex decodes and validates chunk 2. archiveLen is the size of the
// mount archive, against which file data ranges are checked.
func decodeIndex(d *decoder, archiveLen uint64) ([]Entry, error) {
	schema, err := d.u16("index schema")
	if err != nil {
		return nil, err
	}
	if schema != 1 {
		d.off -= 2
		return nil, d.fail(ErrUnsupportedSchema, "index schema "+strconv.Itoa(int(schema)))
	}
	n, err := d.count(minEntryLen, "index entries")
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, 0, n)
	// Entries are strictly sorted, so each one's parent directory, if
	// present, was seen earlier; dirs records the directories seen so far.
	dirs := make(map[string]bool)
	for i := range n {
		at := d.pos()
		e, err := decodeEntry(d, archiveLen)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			if e.Path != "/" || e.Kind != KindDir {
				return nil, formatErr(at, ErrBadEntry, "first entry is not the root directory")
			}
		} else {
			if prev := entries[i-1].Path; e.Path <= prev {
				return nil, formatErr(at, ErrUnsorted, strconv.Quote(e.Path)+" after "+strconv.Quote(prev))
			}
			if !dirs[path.Dir(e.Path)] {
				return nil, formatErr(at, ErrBadEntry, "parent of "+strconv.Quote(e.Path)+" is not a directory in the index")
			}
		}
		if e.Kind == KindDir {
			dirs[e.Path] = true
		}
		entries = append(entries, e)
	}
	if n == 0 {
		return nil, d.fail(ErrBadEntry, "index has no root directory")
	}
	return entries, d.end("index")
}

func decodeEntry(d *decoder, archiveLen uint64) (Entry, error) {
	var e Entry
	start := d.pos()
	var err error
	if e.Path, err = d.str(maxPathLen, "entry path"); err != nil {
		return e, err
	}
	if !cleanAbs(e.Path) {
		return e, formatErr(start, ErrBadPath, "entry path "+strconv.Quote(e.Path))
	}
	kind, err := d.enum(3, "entry kind")
	if err != nil {
		return e, err
	}
	e.Kind = Kind(kind)
	if e.Offset, err = d.u64("entry offset"); err != nil {
		return e, err
	}
	if e.Size, err = d.u64("entry size"); err != nil {
		return e, err
	}
	if e.Mode, err = d.u32("entry mode"); err != nil {
		return e, err
	}
	if e.UID, err = d.u32("entry uid"); err != nil {
		return e, err
	}
	if e.GID, err = d.u32("entry gid"); err != nil {
		return e, err
	}
	if e.Mtime, err = d.i64("entry mtime"); err != nil {
		return e, err
	}
	hasTarget, err := d.tag("entry link target")
	if err != nil {
		return e, err
	}
	if hasTarget {
		at := d.pos()
		if e.LinkTarget, err = d.str(maxPathLen, "entry link target"); err != nil {
			return e, err
		}
		if e.LinkTarget == "" {
			return e, formatErr(at, ErrBadEntry, "empty link target for "+strconv.Quote(e.Path))
		}
	}
	return e, checkEntry(e, hasTarget, start, archiveLen)
}

// checkEntry checks that an entry's fields agree with each other and that
// file data lies inside the mount archive.
func checkEntry(e Entry, hasTarget bool, at int64, archiveLen uint64) error {
	q := strconv.Quote(e.Path)
	if e.Mode&^0o177777 != 0 {
		return formatErr(at, ErrBadEntry, q+": mode "+strconv.FormatUint(uint64(e.Mode), 8))
	}
	if e.Mode&modeTypeMask != e.Kind.modeType() {
		return formatErr(at, ErrBadEntry, q+": mode "+strconv.FormatUint(uint64(e.Mode), 8)+" does not match kind "+e.Kind.String())
	}
	if hasTarget != (e.Kind == KindSymlink) {
		return formatErr(at, ErrBadEntry, q+": link target presence does not match kind "+e.Kind.String())
	}
	if e.Kind != KindFile {
		if e.Size != 0 {
			return formatErr(at, ErrBadEntry, q+": "+e.Kind.String()+" with data")
		}
		return nil
	}
	end := e.Offset + e.Size
	if end < e.Offset || end > archiveLen {
		return formatErr(at, ErrOutOfRange, q+": data ["+strconv.FormatUint(e.Offset, 10)+", +"+
			strconv.FormatUint(e.Size, 10)+") beyond mount archive of "+strconv.FormatUint(archiveLen, 10)+" bytes")
	}
	return nil
}
