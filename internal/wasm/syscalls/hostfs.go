package syscalls

import (
	"context"

	"github.com/tetratelabs/wazero/api"

	"github.com/secexec/secexec/kernel/vfs"
)

func fsFuncs() []hostFunc {
	return []hostFunc{
		{"chmod", sig(4), errnoResult, sysFunc(fsChmod)},
		{"fd_mode", sig(1), []api.ValueType{i32}, valueFunc(0, fsFdMode)},
		{"fd_size", sig(1), []api.ValueType{i64}, valueFunc(^uint64(0), fsFdSize)},
		{"ftruncate", []api.ValueType{i32, i64}, errnoResult, valueFunc(1, fsFtruncate)},
		{"path_chown", sig(6), errnoResult, sysFunc(fsPathChown)},
		{"path_mode", sig(4), []api.ValueType{i32}, valueFunc(0, fsPathMode)},
		{"path_owner", sig(6), errnoResult, sysFunc(fsPathOwner)},
		{"path_rdev", sig(4), []api.ValueType{i64}, valueFunc(0, fsPathRdev)},
		{"path_size", sig(4), []api.ValueType{i64}, valueFunc(^uint64(0), fsPathSize)},
		{"path_statfs", sig(8), errnoResult, sysFunc(fsPathStatfs)},
		{"remount", sig(4), errnoResult, sysFunc(fsRemount)},
		{"set_open_mode", sig(1), errnoResult, sysFunc(fsSetOpenMode)},
	}
}

// pathStat stats (fd, path) for the metadata queries.
func (s *State) pathStat(ctx context.Context, m mem, st []uint64) (vfs.Stat, Errno) {
	dirfd, p, e := s.pathArg(m, uint32(st[0]), uint32(st[1]), uint32(st[2]))
	if e != ESUCCESS {
		return vfs.Stat{}, e
	}
	fs, err := s.P.Stat(ctx, dirfd, p, uint32(st[3]) != 0)
	if err != nil {
		return vfs.Stat{}, s.errOf(err)
	}
	return fs, ESUCCESS
}

func (s *State) fdStat(ctx context.Context, fd uint32) (vfs.Stat, Errno) {
	f, e := s.file(fd)
	if e != ESUCCESS {
		return vfs.Stat{}, e
	}
	defer f.DecRef()
	fs, err := f.Stat(ctx)
	if err != nil {
		return vfs.Stat{}, ErrnoOf(err)
	}
	return fs, ESUCCESS
}

func fsChmod(ctx context.Context, s *State, m mem, st []uint64) Errno {
	dirfd, p, e := s.pathArg(m, uint32(st[0]), uint32(st[1]), uint32(st[2]))
	if e != ESUCCESS {
		return e
	}
	return s.errOf(s.P.SetAttr(ctx, dirfd, p, true, vfs.SetAttr{Mask: vfs.SetMode, Mode: uint32(st[3]) & vfs.ModePerm}))
}

// fd_mode returns the full st_mode, 0 on any error (agentOS ABI §8.2).
func fsFdMode(ctx context.Context, s *State, _ mem, st []uint64) uint64 {
	fs, e := s.fdStat(ctx, uint32(st[0]))
	if e != ESUCCESS {
		return 0
	}
	return uint64(fs.Mode)
}

// fd_size returns the size, -1 on any error.
func fsFdSize(ctx context.Context, s *State, _ mem, st []uint64) uint64 {
	fs, e := s.fdStat(ctx, uint32(st[0]))
	if e != ESUCCESS {
		return ^uint64(0)
	}
	return uint64(fs.Size)
}

// ftruncate keeps upstream's contract: 0 on success, 1 on any failure.
func fsFtruncate(ctx context.Context, s *State, _ mem, st []uint64) uint64 {
	size := int64(st[1])
	if size < 0 {
		return 1
	}
	if err := s.P.Fsetattr(ctx, kfd(uint32(st[0])), vfs.SetAttr{Mask: vfs.SetSize, Size: size}); err != nil {
		s.errOf(err)
		return 1
	}
	return 0
}

func fsPathChown(ctx context.Context, s *State, m mem, st []uint64) Errno {
	dirfd, p, e := s.pathArg(m, uint32(st[0]), uint32(st[1]), uint32(st[2]))
	if e != ESUCCESS {
		return e
	}
	uid, gid, follow := uint32(st[3]), uint32(st[4]), uint32(st[5]) != 0
	var a vfs.SetAttr
	if uid != 0xFFFFFFFF {
		a.Mask |= vfs.SetUID
		a.UID = uid
	}
	if gid != 0xFFFFFFFF {
		a.Mask |= vfs.SetGID
		a.GID = gid
	}
	if a.Mask == 0 {
		_, err := s.P.Stat(ctx, dirfd, p, follow)
		return s.errOf(err)
	}
	return s.errOf(s.P.SetAttr(ctx, dirfd, p, follow, a))
}

// fsPathMode returns the full st_mode of a path, 0 on any error.
//
// A character device or a pipe reached by a followed lookup (stat, not
// lstat) is reported as a regular file. The agentOS guests' std derives
// metadata().file_type() from this mode, and on WASI it has no
// is_char_device() or is_fifo(): uutils cat classifies its inputs with it
// and refuses /dev/null, or a process substitution's /dev/fd/63, as an
// "unknown filetype" (agentOS ABI §13.8), while reading a device or a
// pipe like a file is exactly what such tools need. lstat (ls -l, stat),
// fstat (host_fs.fd_mode) and the WASI filestat type keep saying
// "character device" or "fifo".
func fsPathMode(ctx context.Context, s *State, m mem, st []uint64) uint64 {
	fs, e := s.pathStat(ctx, m, st)
	if e != ESUCCESS {
		return 0
	}
	if t := fs.Type(); uint32(st[3]) != 0 && (t == vfs.TypeCharDev || t == vfs.TypeFIFO) {
		return uint64(vfs.S_IFREG | fs.Mode&vfs.ModePerm)
	}
	return uint64(fs.Mode)
}

func fsPathOwner(ctx context.Context, s *State, m mem, st []uint64) Errno {
	uidp, gidp := uint32(st[4]), uint32(st[5])
	if !m.valid(uidp, 4) || !m.valid(gidp, 4) {
		return EFAULT
	}
	fs, e := s.pathStat(ctx, m, st)
	if e != ESUCCESS {
		return e
	}
	m.putU32(uidp, fs.UID)
	m.putU32(gidp, fs.GID)
	return ESUCCESS
}

func fsPathRdev(ctx context.Context, s *State, m mem, st []uint64) uint64 {
	fs, e := s.pathStat(ctx, m, st)
	if e != ESUCCESS {
		return 0
	}
	return fs.Rdev
}

func fsPathSize(ctx context.Context, s *State, m mem, st []uint64) uint64 {
	fs, e := s.pathStat(ctx, m, st)
	if e != ESUCCESS {
		return ^uint64(0)
	}
	return uint64(fs.Size)
}

func fsPathStatfs(ctx context.Context, s *State, m mem, st []uint64) Errno {
	outs := st[3:8]
	for _, o := range outs {
		if !m.valid(uint32(o), 8) {
			return EFAULT
		}
	}
	dirfd, p, e := s.pathArg(m, uint32(st[0]), uint32(st[1]), uint32(st[2]))
	if e != ESUCCESS {
		return e
	}
	sf, err := s.P.Statfs(ctx, dirfd, p)
	if err != nil {
		return s.errOf(err)
	}
	bs := uint64(max(sf.BlockSize, 0))
	total, free := sf.Blocks*bs, sf.BlocksFree*bs
	vals := []uint64{total, total - min(free, total), free, sf.Files, sf.FilesFree}
	for i, o := range outs {
		m.putU64(uint32(o), vals[i])
	}
	return ESUCCESS
}

// remount needs root, which no guest of this kernel has.
func fsRemount(context.Context, *State, mem, []uint64) Errno { return EPERM }

func fsSetOpenMode(_ context.Context, s *State, _ mem, st []uint64) Errno {
	s.openMode = uint32(st[0]) & vfs.ModePerm
	s.openModeSet = true
	return ESUCCESS
}
