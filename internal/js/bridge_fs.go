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
	return float64(t.UnixNano()) / 1e6
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

// pathArgs decodes n path arguments.
func pathArgs(args []*v8.Value, n int) ([]string, error) {
	out := make([]string, n)
	for i := range out {
		p, err := argPath(args, i)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

func init() {
	register("open", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		path, err := argPath(args, 0)
		if err != nil {
			return nil, err
		}
		flags, err1 := argInt(args, 1)
		mode, err2 := argInt(args, 2)
		if err1 != nil || err2 != nil || flags < 0 || mode < 0 {
			return nil, errno.EINVAL
		}
		f := vfs.OpenFlags(flags)&openFlagsAllowed | vfs.O_CLOEXEC
		fd, err := r.p.Open(r.ctx, kernel.AtFDCWD, path, f, uint32(mode)&0o7777)
		if err != nil {
			return nil, err
		}
		return r.num(fd), nil
	})
	register("close", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		fd, err := argInt(args, 0)
		if err != nil {
			return nil, err
		}
		return nil, r.p.Close(fd)
	})
	register("stat", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		path, err := argPath(args, 0)
		if err != nil {
			return nil, err
		}
		st, err := r.p.Stat(r.ctx, kernel.AtFDCWD, path, argBool(args, 1))
		if err != nil {
			return nil, err
		}
		r.putStat(st)
		return nil, nil
	})
	register("statfs", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		path, err := argPath(args, 0)
		if err != nil {
			return nil, err
		}
		sf, err := r.p.Statfs(r.ctx, kernel.AtFDCWD, path)
		if err != nil {
			return nil, err
		}
		// statfs(2)'s f_bfree and f_bavail are the same here: no blocks
		// are reserved for root.
		r.putF64(float64(sf.Type), float64(sf.BlockSize), float64(sf.Blocks), float64(sf.BlocksFree),
			float64(sf.BlocksFree), float64(sf.Files), float64(sf.FilesFree))
		return nil, nil
	})
	register("fstat", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		fd, err := argInt(args, 0)
		if err != nil {
			return nil, err
		}
		st, err := r.p.Fstat(r.ctx, fd)
		if err != nil {
			return nil, err
		}
		r.putStat(st)
		return nil, nil
	})
	register("access", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		path, err := argPath(args, 0)
		if err != nil {
			return nil, err
		}
		mode, err := argInt(args, 1)
		if err != nil || mode < 0 || mode > 7 {
			return nil, errno.EINVAL
		}
		return nil, r.p.Access(r.ctx, kernel.AtFDCWD, path, uint32(mode))
	})
	register("readdir", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		path, err := argPath(args, 0)
		if err != nil {
			return nil, err
		}
		fd, err := r.p.Open(r.ctx, kernel.AtFDCWD, path, vfs.O_RDONLY|vfs.O_DIRECTORY|vfs.O_CLOEXEC, 0)
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
	})
	register("mkdir", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		path, err := argPath(args, 0)
		if err != nil {
			return nil, err
		}
		mode, err := argInt(args, 1)
		if err != nil || mode < 0 {
			return nil, errno.EINVAL
		}
		return nil, r.p.Mkdir(r.ctx, kernel.AtFDCWD, path, uint32(mode)&0o7777)
	})
	register("rmdir", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		path, err := argPath(args, 0)
		if err != nil {
			return nil, err
		}
		return nil, r.p.Unlink(r.ctx, kernel.AtFDCWD, path, true)
	})
	register("unlink", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		path, err := argPath(args, 0)
		if err != nil {
			return nil, err
		}
		return nil, r.p.Unlink(r.ctx, kernel.AtFDCWD, path, false)
	})
	register("rename", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		ps, err := pathArgs(args, 2)
		if err != nil {
			return nil, err
		}
		return nil, r.p.Rename(r.ctx, kernel.AtFDCWD, ps[0], kernel.AtFDCWD, ps[1])
	})
	register("link", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		ps, err := pathArgs(args, 2)
		if err != nil {
			return nil, err
		}
		return nil, r.p.Link(r.ctx, kernel.AtFDCWD, ps[0], kernel.AtFDCWD, ps[1])
	})
	register("symlink", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		ps, err := pathArgs(args, 2)
		if err != nil {
			return nil, err
		}
		return nil, r.p.Symlink(r.ctx, ps[0], kernel.AtFDCWD, ps[1])
	})
	register("readlink", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		path, err := argPath(args, 0)
		if err != nil {
			return nil, err
		}
		s, err := r.p.Readlink(r.ctx, kernel.AtFDCWD, path)
		if err != nil {
			return nil, err
		}
		return r.string(s)
	})
	register("realpath", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		path, err := argPath(args, 0)
		if err != nil {
			return nil, err
		}
		s, err := r.realpath(path)
		if err != nil {
			return nil, err
		}
		return r.string(s)
	})
	register("chmod", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		path, err := argPath(args, 0)
		if err != nil {
			return nil, err
		}
		mode, err := argInt(args, 1)
		if err != nil || mode < 0 {
			return nil, errno.EINVAL
		}
		return nil, r.p.SetAttr(r.ctx, kernel.AtFDCWD, path, argBool(args, 2), vfs.SetAttr{Mask: vfs.SetMode, Mode: uint32(mode) & 0o7777})
	})
	register("fchmod", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		fd, err1 := argInt(args, 0)
		mode, err2 := argInt(args, 1)
		if err1 != nil || err2 != nil || mode < 0 {
			return nil, errno.EINVAL
		}
		return nil, r.p.Fsetattr(r.ctx, fd, vfs.SetAttr{Mask: vfs.SetMode, Mode: uint32(mode) & 0o7777})
	})
	registerAttr("chown", "fchown", ownerAttr)
	registerAttr("utimes", "futimes", timesAttr)
	register("truncate", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		path, err := argPath(args, 0)
		if err != nil {
			return nil, err
		}
		n, err := argInt(args, 1)
		if err != nil || n < 0 {
			return nil, errno.EINVAL
		}
		fd, err := r.p.Open(r.ctx, kernel.AtFDCWD, path, vfs.O_WRONLY|vfs.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		defer r.p.Close(fd)
		return nil, r.p.Fsetattr(r.ctx, fd, vfs.SetAttr{Mask: vfs.SetSize, Size: int64(n)})
	})
	register("ftruncate", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		fd, err1 := argInt(args, 0)
		n, err2 := argInt(args, 1)
		if err1 != nil || err2 != nil || n < 0 {
			return nil, errno.EINVAL
		}
		return nil, r.p.Fsetattr(r.ctx, fd, vfs.SetAttr{Mask: vfs.SetSize, Size: int64(n)})
	})
}

func ownerAttr(args []*v8.Value, i int) (vfs.SetAttr, error) {
	uid, err1 := argInt(args, i)
	gid, err2 := argInt(args, i+1)
	if err1 != nil || err2 != nil || uid < -1 || gid < -1 || uid > math.MaxUint32 || gid > math.MaxUint32 {
		return vfs.SetAttr{}, errno.EINVAL
	}
	var a vfs.SetAttr
	if uid >= 0 {
		a.Mask |= vfs.SetUID
		a.UID = uint32(uid)
	}
	if gid >= 0 {
		a.Mask |= vfs.SetGID
		a.GID = uint32(gid)
	}
	return a, nil
}

func timesAttr(args []*v8.Value, i int) (vfs.SetAttr, error) {
	at, err := timeOfMs(argFloat(args, i))
	if err != nil {
		return vfs.SetAttr{}, err
	}
	mt, err := timeOfMs(argFloat(args, i+1))
	if err != nil {
		return vfs.SetAttr{}, err
	}
	return vfs.SetAttr{Mask: vfs.SetAtime | vfs.SetMtime, Atime: at, Mtime: mt}, nil
}

// realpath resolves path as the process sees it (permission-checked).
func (r *rt) realpath(path string) (string, error) {
	return r.p.Kernel().VFS().Realpath(r.ctx, r.p.Caller(), path)
}

// registerAttr registers a path form (path, attr args..., follow at index
// 3) and an fd form (fd, attr args...) of one attribute change, decoded
// from the arguments starting at index 1.
func registerAttr(pathName, fdName string, decode func([]*v8.Value, int) (vfs.SetAttr, error)) {
	register(pathName, func(r *rt, args []*v8.Value) (*v8.Value, error) {
		path, err := argPath(args, 0)
		if err != nil {
			return nil, err
		}
		attr, err := decode(args, 1)
		if err != nil {
			return nil, err
		}
		return nil, r.p.SetAttr(r.ctx, kernel.AtFDCWD, path, argBool(args, 3), attr)
	})
	register(fdName, func(r *rt, args []*v8.Value) (*v8.Value, error) {
		fd, err := argInt(args, 0)
		if err != nil {
			return nil, err
		}
		attr, err := decode(args, 1)
		if err != nil {
			return nil, err
		}
		return nil, r.p.Fsetattr(r.ctx, fd, attr)
	})
}
