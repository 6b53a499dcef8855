package js

import (
	"math"
	"strings"
	"time"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// openFlagsAllowed are the open(2) flags a guest may pass; the rest are
// ignored. O_CLOEXEC is always added: Node opens every descriptor
// close-on-exec, so children never inherit a script's files.
const openFlagsAllowed = vfs.O_ACCMODE | vfs.O_CREAT | vfs.O_EXCL | vfs.O_NOCTTY | vfs.O_TRUNC |
	vfs.O_APPEND | vfs.O_NONBLOCK | vfs.O_DSYNC | vfs.O_DIRECTORY | vfs.O_NOFOLLOW | vfs.O_SYNC

// maxDirEntries bounds one readdir.
const maxDirEntries = 1 << 20

func msOf(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	// Seconds and nanoseconds apart, as node computes it: a time on whole
	// milliseconds stays whole (float64(UnixNano()) rounds to 256 ns at
	// today's dates) and no date overflows.
	return float64(t.Unix())*1e3 + float64(t.Nanosecond())/1e6
}

func (r *rt) putStat(st vfs.Stat) {
	r.putF64(float64(st.Dev), float64(st.Mode), float64(st.Nlink), float64(st.UID), float64(st.GID),
		float64(st.Rdev), float64(st.Blksize), float64(st.Ino), float64(st.Size), float64(st.Blocks),
		msOf(st.Atime), msOf(st.Mtime), msOf(st.Ctime), msOf(st.Ctime))
}

func timeOfMs(ms float64) (time.Time, error) {
	if math.IsNaN(ms) || math.IsInf(ms, 0) || math.Abs(ms) > 1e15 {
		return time.Time{}, errno.EINVAL
	}
	sec := math.Floor(ms / 1000)
	ns := (ms - sec*1000) * 1e6
	return time.Unix(int64(sec), int64(ns)), nil
}

func direntType(t vfs.FileType) byte {
	switch t {
	case vfs.TypeRegular:
		return 'f'
	case vfs.TypeDir:
		return 'd'
	case vfs.TypeSymlink:
		return 'l'
	case vfs.TypeFIFO:
		return 'p'
	case vfs.TypeSocket:
		return 's'
	case vfs.TypeCharDev:
		return 'c'
	case vfs.TypeBlock:
		return 'b'
	}
	return 'u'
}

// bridgeOpen is open(2) relative to the working directory; the flags
// are filtered to openFlagsAllowed.
func bridgeOpen(r *rt, a *callArgs) (*v8.Value, error) {
	flags, mode := a.int(1), a.int(2)
	if flags < 0 || mode < 0 {
		return nil, errno.EINVAL
	}
	f := vfs.OpenFlags(flags)&openFlagsAllowed | vfs.O_CLOEXEC
	fd, err := r.p.Open(r.ctx, kernel.AtFDCWD, a.path(0), f, uint32(mode)&0o7777)
	if err != nil {
		return nil, err
	}
	return r.num(fd), nil
}

func bridgeClose(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.p.Close(a.int(0))
}

// bridgeStat puts path's stat (see putStat) in the scratch buffer.
func bridgeStat(r *rt, a *callArgs) (*v8.Value, error) {
	st, err := r.p.Stat(r.ctx, kernel.AtFDCWD, a.path(0), a.bool(1))
	if err != nil {
		return nil, err
	}
	r.putStat(st)
	return nil, nil
}

func bridgeStatfs(r *rt, a *callArgs) (*v8.Value, error) {
	sf, err := r.p.Statfs(r.ctx, kernel.AtFDCWD, a.path(0))
	if err != nil {
		return nil, err
	}
	// statfs(2)'s f_bfree and f_bavail are the same here: no blocks
	// are reserved for root.
	r.putF64(float64(sf.Type), float64(sf.BlockSize), float64(sf.Blocks), float64(sf.BlocksFree),
		float64(sf.BlocksFree), float64(sf.Files), float64(sf.FilesFree))
	return nil, nil
}

func bridgeFstat(r *rt, a *callArgs) (*v8.Value, error) {
	st, err := r.p.Fstat(r.ctx, a.int(0))
	if err != nil {
		return nil, err
	}
	r.putStat(st)
	return nil, nil
}

func bridgeAccess(r *rt, a *callArgs) (*v8.Value, error) {
	mode := a.int(1)
	if mode < 0 || mode > 7 {
		return nil, errno.EINVAL
	}
	return nil, r.p.Access(r.ctx, kernel.AtFDCWD, a.path(0), uint32(mode))
}

// bridgeReaddir returns path's entries but . and .., NUL-separated, each
// its type letter (direntType) and its name.
func bridgeReaddir(r *rt, a *callArgs) (*v8.Value, error) {
	fd, err := r.p.Open(r.ctx, kernel.AtFDCWD, a.path(0), vfs.O_RDONLY|vfs.O_DIRECTORY|vfs.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer r.p.Close(fd)
	var sb strings.Builder
	count := 0
	for {
		ents, err := r.p.ReadDir(r.ctx, fd, 256)
		if err != nil {
			return nil, err
		}
		if len(ents) == 0 {
			break
		}
		for _, e := range ents {
			if e.Name == "." || e.Name == ".." {
				continue
			}
			if count > 0 {
				sb.WriteByte(0)
			}
			sb.WriteByte(direntType(e.Type))
			sb.WriteString(e.Name)
			count++
		}
		if count > maxDirEntries {
			return nil, errno.ENOMEM
		}
	}
	return r.string(sb.String())
}

func bridgeMkdir(r *rt, a *callArgs) (*v8.Value, error) {
	mode := a.int(1)
	if mode < 0 {
		return nil, errno.EINVAL
	}
	return nil, r.p.Mkdir(r.ctx, kernel.AtFDCWD, a.path(0), uint32(mode)&0o7777)
}

func bridgeRmdir(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.p.Unlink(r.ctx, kernel.AtFDCWD, a.path(0), true)
}

func bridgeUnlink(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.p.Unlink(r.ctx, kernel.AtFDCWD, a.path(0), false)
}

func bridgeRename(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.p.Rename(r.ctx, kernel.AtFDCWD, a.path(0), kernel.AtFDCWD, a.path(1))
}

func bridgeLink(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.p.Link(r.ctx, kernel.AtFDCWD, a.path(0), kernel.AtFDCWD, a.path(1))
}

func bridgeSymlink(r *rt, a *callArgs) (*v8.Value, error) {
	return nil, r.p.Symlink(r.ctx, a.path(0), kernel.AtFDCWD, a.path(1))
}

func bridgeReadlink(r *rt, a *callArgs) (*v8.Value, error) {
	s, err := r.p.Readlink(r.ctx, kernel.AtFDCWD, a.path(0))
	if err != nil {
		return nil, err
	}
	return r.string(s)
}

func bridgeRealpath(r *rt, a *callArgs) (*v8.Value, error) {
	s, err := r.realpath(a.path(0))
	if err != nil {
		return nil, err
	}
	return r.string(s)
}

func bridgeChmod(r *rt, a *callArgs) (*v8.Value, error) { return r.setAttrOfPath(a, 2, modeAttr) }

func bridgeFchmod(r *rt, a *callArgs) (*v8.Value, error) { return r.setAttrOfFD(a, modeAttr) }

// bridgeChown, bridgeUtimes and their fd forms take follow last.
func bridgeChown(r *rt, a *callArgs) (*v8.Value, error) { return r.setAttrOfPath(a, 3, ownerAttr) }

func bridgeFchown(r *rt, a *callArgs) (*v8.Value, error) { return r.setAttrOfFD(a, ownerAttr) }

func bridgeUtimes(r *rt, a *callArgs) (*v8.Value, error) { return r.setAttrOfPath(a, 3, timesAttr) }

func bridgeFutimes(r *rt, a *callArgs) (*v8.Value, error) { return r.setAttrOfFD(a, timesAttr) }

func bridgeTruncate(r *rt, a *callArgs) (*v8.Value, error) {
	attr, err := sizeAttr(a, 1)
	if err != nil {
		return nil, err
	}
	fd, err := r.p.Open(r.ctx, kernel.AtFDCWD, a.path(0), vfs.O_WRONLY|vfs.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer r.p.Close(fd)
	return nil, r.p.Fsetattr(r.ctx, fd, attr)
}

func bridgeFtruncate(r *rt, a *callArgs) (*v8.Value, error) { return r.setAttrOfFD(a, sizeAttr) }

// The attribute decoders read the arguments from index i on.

// modeAttr decodes a mode from int i.
func modeAttr(a *callArgs, i int) (vfs.SetAttr, error) {
	mode := a.int(i)
	if mode < 0 {
		return vfs.SetAttr{}, errno.EINVAL
	}
	return vfs.SetAttr{Mask: vfs.SetMode, Mode: uint32(mode) & 0o7777}, nil
}

// sizeAttr decodes a file size from int i.
func sizeAttr(a *callArgs, i int) (vfs.SetAttr, error) {
	n := a.int(i)
	if n < 0 {
		return vfs.SetAttr{}, errno.EINVAL
	}
	return vfs.SetAttr{Mask: vfs.SetSize, Size: int64(n)}, nil
}

// ownerAttr decodes uid and gid from ints i and i+1; -1 leaves one
// unchanged.
func ownerAttr(a *callArgs, i int) (vfs.SetAttr, error) {
	uid, gid := a.int(i), a.int(i+1)
	if uid < -1 || gid < -1 || uid > math.MaxUint32 || gid > math.MaxUint32 {
		return vfs.SetAttr{}, errno.EINVAL
	}
	var attr vfs.SetAttr
	if uid >= 0 {
		attr.Mask |= vfs.SetUID
		attr.UID = uint32(uid)
	}
	if gid >= 0 {
		attr.Mask |= vfs.SetGID
		attr.GID = uint32(gid)
	}
	return attr, nil
}

// timesAttr decodes atime and mtime, in milliseconds, from floats i and
// i+1.
func timesAttr(a *callArgs, i int) (vfs.SetAttr, error) {
	at, err := timeOfMs(a.float(i))
	if err != nil {
		return vfs.SetAttr{}, err
	}
	mt, err := timeOfMs(a.float(i + 1))
	if err != nil {
		return vfs.SetAttr{}, err
	}
	return vfs.SetAttr{Mask: vfs.SetAtime | vfs.SetMtime, Atime: at, Mtime: mt}, nil
}

// setAttrOfPath changes the attribute decode reads from the arguments
// after path argument 0; bool argument follow says whether a final
// symlink is followed.
func (r *rt) setAttrOfPath(a *callArgs, follow int, decode func(*callArgs, int) (vfs.SetAttr, error)) (*v8.Value, error) {
	attr, err := decode(a, 1)
	if err != nil {
		return nil, err
	}
	return nil, r.p.SetAttr(r.ctx, kernel.AtFDCWD, a.path(0), a.bool(follow), attr)
}

// setAttrOfFD is setAttrOfPath for the descriptor in int argument 0.
func (r *rt) setAttrOfFD(a *callArgs, decode func(*callArgs, int) (vfs.SetAttr, error)) (*v8.Value, error) {
	attr, err := decode(a, 1)
	if err != nil {
		return nil, err
	}
	return nil, r.p.Fsetattr(r.ctx, a.int(0), attr)
}

// realpath resolves path as the process sees it (permission-checked).
func (r *rt) realpath(path string) (string, error) {
	return r.p.Kernel().VFS().Realpath(r.ctx, r.p.Caller(), path)
}
