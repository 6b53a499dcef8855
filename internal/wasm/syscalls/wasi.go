package syscalls

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"math"
	"runtime"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// WASI file types.
const (
	filetypeUnknown      = 0
	filetypeBlockDevice  = 1
	filetypeCharDevice   = 2
	filetypeDirectory    = 3
	filetypeRegular      = 4
	filetypeSocketStream = 6
	filetypeSymlink      = 7
)

// WASI fdflags.
const (
	fdflagAppend   = 1
	fdflagDsync    = 2
	fdflagNonblock = 4
	fdflagRsync    = 8
	fdflagSync     = 16
)

// WASI rights this layer reports. Guests do not check them (the agentOS
// ABI §6), except wasi-libc's isatty, which calls a character device a
// terminal only when it lacks the seek and tell rights.
const (
	rightsAll      = 0x1FFFFFFF
	rightFDSeek    = 1 << 2
	rightFDTell    = 1 << 5
	rightFDRead    = 1 << 1
	rightFDWrite   = 1 << 6
	rightsTerminal = rightsAll &^ (rightFDSeek | rightFDTell)
)

// Terminal is implemented by open files that are terminals (the
// kernel's PTY files); host_user.isatty and fd_fdstat_get agree on the
// answer through it.
type Terminal interface {
	IsTerminal() bool
}

func isTerminal(f vfs.File) bool {
	t, ok := f.(Terminal)
	return ok && t.IsTerminal()
}

func filetypeOf(t vfs.FileType) uint8 {
	switch t {
	case vfs.TypeRegular:
		return filetypeRegular
	case vfs.TypeDir:
		return filetypeDirectory
	case vfs.TypeSymlink:
		return filetypeSymlink
	case vfs.TypeCharDev:
		return filetypeCharDevice
	case vfs.TypeBlock:
		return filetypeBlockDevice
	case vfs.TypeSocket:
		return filetypeSocketStream
	}
	// FIFOs: WASI has no type for them, and a pipe must never look like a
	// socket (agentOS ABI §5.4).
	return filetypeUnknown
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	n := t.UnixNano()
	if n < 0 {
		return 0
	}
	return uint64(n)
}

// putFilestat writes the 64-byte WASI filestat.
func putFilestat(b []byte, st *vfs.Stat) {
	binary.LittleEndian.PutUint64(b[0:], st.Dev)
	binary.LittleEndian.PutUint64(b[8:], st.Ino)
	clear(b[16:24])
	b[16] = filetypeOf(st.Type())
	binary.LittleEndian.PutUint64(b[24:], uint64(st.Nlink))
	binary.LittleEndian.PutUint64(b[32:], uint64(max(st.Size, 0)))
	binary.LittleEndian.PutUint64(b[40:], unixNano(st.Atime))
	binary.LittleEndian.PutUint64(b[48:], unixNano(st.Mtime))
	binary.LittleEndian.PutUint64(b[56:], unixNano(st.Ctime))
}

// file returns the open file a guest descriptor names, tagged preopen
// aliases included, with a reference the caller drops.
func (s *State) file(fd uint32) (vfs.File, Errno) {
	if isTagged(fd) {
		pre := s.preopenOf(fd)
		if pre == nil || pre.file == nil {
			return nil, EBADF
		}
		pre.file.IncRef()
		return pre.file, ESUCCESS
	}
	if fd > math.MaxInt32 {
		return nil, EBADF
	}
	f, err := s.P.File(int(fd))
	if err != nil {
		return nil, EBADF
	}
	return f, ESUCCESS
}

// kfd converts a guest descriptor for the kernel's fd-based calls; tagged
// aliases and out-of-range numbers become an fd no table has.
func kfd(fd uint32) int {
	if fd > math.MaxInt32 {
		return -1
	}
	return int(fd)
}

// at turns a (directory descriptor, path) pair into the kernel's dirfd
// and path: absolute paths ignore the descriptor, tagged aliases resolve
// against their preopen's path, AT_FDCWD sentinels against the process's
// working directory, and other descriptors are the kernel's business.
func (s *State) at(fd uint32, p string) (int, string, Errno) {
	switch {
	case strings.HasPrefix(p, "/"), fd == fdCwd, fd == fdCwdRename:
		return kernel.AtFDCWD, p, ESUCCESS
	case isTagged(fd):
		pre := s.preopenOf(fd)
		if pre == nil {
			return 0, "", EBADF
		}
		return kernel.AtFDCWD, joinGuest(pre.path, p), ESUCCESS
	case fd > math.MaxInt32:
		return 0, "", EBADF
	}
	return int(fd), p, ESUCCESS
}

// pathArg reads a path argument and resolves its directory.
func (s *State) pathArg(m mem, fd, ptr, n uint32) (int, string, Errno) {
	p, e := m.path(ptr, n)
	if e != ESUCCESS {
		return 0, "", e
	}
	return s.at(fd, p)
}

// errOf maps a kernel error, first stopping a guest whose blocking call
// was interrupted because its process was killed.
func (s *State) errOf(err error) Errno {
	e := ErrnoOf(err)
	if e == EINTR || e == EPIPE {
		s.checkKilled()
	}
	return e
}

func wasiFuncs() []hostFunc {
	return []hostFunc{
		{"args_get", sig(2), errnoResult, sysFunc(argsGet)},
		{"args_sizes_get", sig(2), errnoResult, sysFunc(argsSizesGet)},
		{"environ_get", sig(2), errnoResult, sysFunc(environGet)},
		{"environ_sizes_get", sig(2), errnoResult, sysFunc(environSizesGet)},
		{"clock_res_get", sig(2), errnoResult, sysFunc(clockResGet)},
		{"clock_time_get", []api.ValueType{i32, i64, i32}, errnoResult, sysFunc(clockTimeGet)},
		{"fd_advise", []api.ValueType{i32, i64, i64, i32}, errnoResult, sysFunc(fdAdvise)},
		{"fd_allocate", []api.ValueType{i32, i64, i64}, errnoResult, sysFunc(fdAllocate)},
		{"fd_close", sig(1), errnoResult, sysFunc(fdClose)},
		{"fd_datasync", sig(1), errnoResult, sysFunc(fdSync)},
		{"fd_fdstat_get", sig(2), errnoResult, sysFunc(fdFdstatGet)},
		{"fd_fdstat_set_flags", sig(2), errnoResult, sysFunc(fdFdstatSetFlags)},
		{"fd_fdstat_set_rights", []api.ValueType{i32, i64, i64}, errnoResult, sysFunc(fdFdstatSetRights)},
		{"fd_filestat_get", sig(2), errnoResult, sysFunc(fdFilestatGet)},
		{"fd_filestat_set_size", []api.ValueType{i32, i64}, errnoResult, sysFunc(fdFilestatSetSize)},
		{"fd_filestat_set_times", []api.ValueType{i32, i64, i64, i32}, errnoResult, sysFunc(fdFilestatSetTimes)},
		{"fd_pread", []api.ValueType{i32, i32, i32, i64, i32}, errnoResult, sysFunc(fdPread)},
		{"fd_prestat_get", sig(2), errnoResult, sysFunc(fdPrestatGet)},
		{"fd_prestat_dir_name", sig(3), errnoResult, sysFunc(fdPrestatDirName)},
		{"fd_pwrite", []api.ValueType{i32, i32, i32, i64, i32}, errnoResult, sysFunc(fdPwrite)},
		{"fd_read", sig(4), errnoResult, sysFunc(fdRead)},
		{"fd_readdir", []api.ValueType{i32, i32, i32, i64, i32}, errnoResult, sysFunc(fdReaddir)},
		{"fd_renumber", sig(2), errnoResult, sysFunc(fdRenumber)},
		{"fd_seek", []api.ValueType{i32, i64, i32, i32}, errnoResult, sysFunc(fdSeek)},
		{"fd_sync", sig(1), errnoResult, sysFunc(fdSync)},
		{"fd_tell", sig(2), errnoResult, sysFunc(fdTell)},
		{"fd_write", sig(4), errnoResult, sysFunc(fdWrite)},
		{"path_create_directory", sig(3), errnoResult, sysFunc(pathCreateDirectory)},
		{"path_filestat_get", sig(5), errnoResult, sysFunc(pathFilestatGet)},
		{"path_filestat_set_times", []api.ValueType{i32, i32, i32, i32, i64, i64, i32}, errnoResult, sysFunc(pathFilestatSetTimes)},
		{"path_link", sig(7), errnoResult, sysFunc(pathLink)},
		{"path_open", []api.ValueType{i32, i32, i32, i32, i32, i64, i64, i32, i32}, errnoResult, sysFunc(pathOpen)},
		{"path_readlink", sig(6), errnoResult, sysFunc(pathReadlink)},
		{"path_remove_directory", sig(3), errnoResult, sysFunc(pathRemoveDirectory)},
		{"path_rename", sig(6), errnoResult, sysFunc(pathRename)},
		{"path_symlink", sig(5), errnoResult, sysFunc(pathSymlink)},
		{"path_unlink_file", sig(3), errnoResult, sysFunc(pathUnlinkFile)},
		{"poll_oneoff", sig(4), errnoResult, sysFunc(pollOneoff)},
		{"proc_exit", sig(1), nil, procExit},
		{"proc_raise", sig(1), errnoResult, sysFunc(procRaise)},
		{"sched_yield", nil, errnoResult, sysFunc(schedYield)},
		{"random_get", sig(2), errnoResult, sysFunc(randomGet)},
		{"sock_accept", sig(3), errnoResult, sysFunc(sockAccept)},
		{"sock_recv", sig(6), errnoResult, sysFunc(sockRecv)},
		{"sock_send", sig(5), errnoResult, sysFunc(sockSend)},
		{"sock_shutdown", sig(2), errnoResult, sysFunc(sockShutdown)},
	}
}

func sizesOf(strs []string) (uint32, uint32) {
	size := 0
	for _, s := range strs {
		size += len(s) + 1
	}
	return uint32(len(strs)), uint32(size)
}

func putSizes(m mem, strs []string, countPtr, sizePtr uint32) Errno {
	n, size := sizesOf(strs)
	if !m.valid(countPtr, 4) || !m.valid(sizePtr, 4) {
		return EFAULT
	}
	m.putU32(countPtr, n)
	m.putU32(sizePtr, size)
	return ESUCCESS
}

func argsGet(_ context.Context, s *State, m mem, st []uint64) Errno {
	return m.putStrings(s.Argv, uint32(st[0]), uint32(st[1]))
}

func argsSizesGet(_ context.Context, s *State, m mem, st []uint64) Errno {
	return putSizes(m, s.Argv, uint32(st[0]), uint32(st[1]))
}

func environGet(_ context.Context, s *State, m mem, st []uint64) Errno {
	return m.putStrings(s.Env, uint32(st[0]), uint32(st[1]))
}

func environSizesGet(_ context.Context, s *State, m mem, st []uint64) Errno {
	return putSizes(m, s.Env, uint32(st[0]), uint32(st[1]))
}

// Clock ids.
const (
	clockRealtime  = 0
	clockMonotonic = 1
	clockProcess   = 2
	clockThread    = 3
)

func clockResGet(_ context.Context, s *State, m mem, st []uint64) Errno {
	id, ptr := uint32(st[0]), uint32(st[1])
	switch id {
	case clockRealtime, clockMonotonic, clockProcess, clockThread:
	default:
		return EINVAL
	}
	// Every clock is read through the VM's clock, so each has its step.
	if !m.putU64(ptr, uint64(s.P.Kernel().Clock().Resolution())) {
		return EFAULT
	}
	return ESUCCESS
}

// now reads a clock, always through the VM's clock (kernel/clock) and
// so under its policy: coarse, real or frozen like every other guest's.
// The monotonic clock counts from the VM's boot, so every process of a VM
// sees the same one; the CPU clocks are the process's CPU time (its
// thread's, see kernel.ThreadCPUClock), or its wall time when no clock is
// registered.
func (s *State) now(id uint32) (uint64, Errno) {
	c := s.P.Kernel().Clock()
	switch id {
	case clockRealtime:
		return unixNano(c.Now()), ESUCCESS
	case clockMonotonic:
		return uint64(c.Monotonic()), ESUCCESS
	case clockProcess, clockThread:
		if cpu, ok := s.P.CPUTime(); ok {
			return uint64(c.Duration(cpu)), ESUCCESS
		}
		return uint64(c.Duration(time.Since(s.P.Start()))), ESUCCESS
	}
	return 0, EINVAL
}

func clockTimeGet(_ context.Context, s *State, m mem, st []uint64) Errno {
	t, e := s.now(uint32(st[0]))
	if e != ESUCCESS {
		return e
	}
	if !m.putU64(uint32(st[2]), t) {
		return EFAULT
	}
	return ESUCCESS
}

func fdAdvise(_ context.Context, s *State, _ mem, st []uint64) Errno {
	f, e := s.file(uint32(st[0]))
	if e != ESUCCESS {
		return e
	}
	f.DecRef()
	if int64(st[1]) < 0 || int64(st[2]) < 0 || uint32(st[3]) > 5 {
		return EINVAL
	}
	return ESUCCESS
}

func fdAllocate(ctx context.Context, s *State, _ mem, st []uint64) Errno {
	fd, off, n := kfd(uint32(st[0])), int64(st[1]), int64(st[2])
	if off < 0 || n <= 0 || off > math.MaxInt64-n {
		return EINVAL
	}
	fs, err := s.P.Fstat(ctx, fd)
	if err != nil {
		return s.errOf(err)
	}
	if fs.Type() != vfs.TypeRegular {
		return ENODEV
	}
	if end := off + n; end > fs.Size {
		return s.errOf(s.P.Fsetattr(ctx, fd, vfs.SetAttr{Mask: vfs.SetSize, Size: end}))
	}
	return ESUCCESS
}

func fdClose(_ context.Context, s *State, _ mem, st []uint64) Errno {
	fd := uint32(st[0])
	if isTagged(fd) {
		return EBADF
	}
	return ErrnoOf(s.P.Close(kfd(fd)))
}

func fdSync(ctx context.Context, s *State, _ mem, st []uint64) Errno {
	f, e := s.file(uint32(st[0]))
	if e != ESUCCESS {
		return e
	}
	defer f.DecRef()
	return ErrnoOf(f.Sync(ctx))
}

func fdflagsOf(fl vfs.OpenFlags) uint16 {
	var out uint16
	if fl&vfs.O_APPEND != 0 {
		out |= fdflagAppend
	}
	if fl&vfs.O_NONBLOCK != 0 {
		out |= fdflagNonblock
	}
	if fl&vfs.O_DSYNC != 0 {
		out |= fdflagDsync
	}
	if fl&vfs.O_SYNC == vfs.O_SYNC {
		out |= fdflagSync | fdflagRsync
	}
	return out
}

func fdFdstatGet(ctx context.Context, s *State, m mem, st []uint64) Errno {
	out, ok := m.bytes(uint32(st[1]), 24)
	if !ok {
		return EFAULT
	}
	f, e := s.file(uint32(st[0]))
	if e != ESUCCESS {
		return e
	}
	defer f.DecRef()
	fs, err := f.Stat(ctx)
	if err != nil {
		return ErrnoOf(err)
	}
	rights := uint64(rightsAll)
	if isTerminal(f) {
		rights = rightsTerminal
	}
	clear(out)
	out[0] = socketFiletype(f, &fs)
	binary.LittleEndian.PutUint16(out[2:], fdflagsOf(f.Flags()))
	binary.LittleEndian.PutUint64(out[8:], rights)
	binary.LittleEndian.PutUint64(out[16:], rights)
	return ESUCCESS
}

func fdFdstatSetFlags(_ context.Context, s *State, _ mem, st []uint64) Errno {
	fd, flags := uint32(st[0]), uint16(st[1])
	f, e := s.file(fd)
	if e != ESUCCESS {
		return e
	}
	defer f.DecRef()
	var fl vfs.OpenFlags
	if flags&fdflagAppend != 0 {
		fl |= vfs.O_APPEND
	}
	if flags&fdflagNonblock != 0 {
		fl |= vfs.O_NONBLOCK
	}
	return ErrnoOf(f.SetFlags(fl))
}

func fdFdstatSetRights(_ context.Context, s *State, _ mem, st []uint64) Errno {
	f, e := s.file(uint32(st[0]))
	if e != ESUCCESS {
		return e
	}
	f.DecRef()
	return ESUCCESS
}

func fdFilestatGet(ctx context.Context, s *State, m mem, st []uint64) Errno {
	out, ok := m.bytes(uint32(st[1]), 64)
	if !ok {
		return EFAULT
	}
	f, e := s.file(uint32(st[0]))
	if e != ESUCCESS {
		return e
	}
	defer f.DecRef()
	fs, err := f.Stat(ctx)
	if err != nil {
		return ErrnoOf(err)
	}
	putFilestat(out, &fs)
	out[16] = socketFiletype(f, &fs)
	return ESUCCESS
}

func fdFilestatSetSize(ctx context.Context, s *State, _ mem, st []uint64) Errno {
	size := st[1]
	if size > math.MaxInt64 {
		return EINVAL
	}
	return s.errOf(s.P.Fsetattr(ctx, kfd(uint32(st[0])), vfs.SetAttr{Mask: vfs.SetSize, Size: int64(size)}))
}

// Flags of the *_set_times functions.
const (
	fstAtim    = 1
	fstAtimNow = 2
	fstMtim    = 4
	fstMtimNow = 8
)

func timesAttr(now time.Time, atim, mtim uint64, flags uint16) (vfs.SetAttr, Errno) {
	var a vfs.SetAttr
	if flags&(fstAtim|fstAtimNow) == fstAtim|fstAtimNow || flags&(fstMtim|fstMtimNow) == fstMtim|fstMtimNow {
		return a, EINVAL
	}
	switch {
	case flags&fstAtimNow != 0:
		a.Mask |= vfs.SetAtime
		a.Atime = now
	case flags&fstAtim != 0:
		a.Mask |= vfs.SetAtime
		a.Atime = time.Unix(0, int64(atim))
	}
	switch {
	case flags&fstMtimNow != 0:
		a.Mask |= vfs.SetMtime
		a.Mtime = now
	case flags&fstMtim != 0:
		a.Mask |= vfs.SetMtime
		a.Mtime = time.Unix(0, int64(mtim))
	}
	return a, ESUCCESS
}

func fdFilestatSetTimes(ctx context.Context, s *State, _ mem, st []uint64) Errno {
	a, e := timesAttr(s.P.Kernel().Clock().Now(), st[1], st[2], uint16(st[3]))
	if e != ESUCCESS {
		return e
	}
	if a.Mask == 0 {
		f, e := s.file(uint32(st[0]))
		if e == ESUCCESS {
			f.DecRef()
		}
		return e
	}
	return s.errOf(s.P.Fsetattr(ctx, kfd(uint32(st[0])), a))
}

// iovecs decodes and bounds-checks an iovec array, returning views of
// guest memory capped at maxIO bytes in total.
func iovecs(m mem, ptr, n uint32) ([][]byte, Errno) {
	if n > maxIovecs {
		return nil, EINVAL
	}
	raw, ok := m.bytes(ptr, n*8)
	if !ok {
		return nil, EFAULT
	}
	out := make([][]byte, 0, n)
	total := 0
	for i := uint32(0); i < n; i++ {
		base := binary.LittleEndian.Uint32(raw[i*8:])
		ln := binary.LittleEndian.Uint32(raw[i*8+4:])
		b, ok := m.bytes(base, ln)
		if !ok {
			return nil, EFAULT
		}
		if room := maxIO - total; len(b) > room {
			b = b[:room]
		}
		total += len(b)
		if len(b) > 0 {
			out = append(out, b)
		}
		if total == maxIO {
			break
		}
	}
	return out, ESUCCESS
}

func fdRW(ctx context.Context, s *State, m mem, fd, iovs, n, outp uint32, pos int64, write bool) Errno {
	if !m.valid(outp, 4) {
		return EFAULT
	}
	if isTagged(fd) {
		return EBADF
	}
	bufs, e := iovecs(m, iovs, n)
	if e != ESUCCESS {
		return e
	}
	// The kernel's vectored I/O (kernel.Process.Readv) is node's too. No
	// buffers still names a descriptor that must be open, as on Linux.
	var total int
	var err error
	if write {
		total, err = s.P.Writev(ctx, kfd(fd), bufs, pos)
	} else {
		total, err = s.P.Readv(ctx, kfd(fd), bufs, pos)
	}
	if err != nil {
		return s.errOf(err)
	}
	m.putU32(outp, uint32(total))
	return ESUCCESS
}

func fdRead(ctx context.Context, s *State, m mem, st []uint64) Errno {
	if s.parked != nil && uint32(st[0]) == 0 {
		if e, ok := s.parkRead(ctx, m, uint32(st[1]), uint32(st[2]), uint32(st[3])); ok {
			return e
		}
	}
	return fdRW(ctx, s, m, uint32(st[0]), uint32(st[1]), uint32(st[2]), uint32(st[3]), -1, false)
}

func fdWrite(ctx context.Context, s *State, m mem, st []uint64) Errno {
	return fdRW(ctx, s, m, uint32(st[0]), uint32(st[1]), uint32(st[2]), uint32(st[3]), -1, true)
}

func fdPread(ctx context.Context, s *State, m mem, st []uint64) Errno {
	if st[3] > math.MaxInt64-maxIO {
		return EINVAL
	}
	return fdRW(ctx, s, m, uint32(st[0]), uint32(st[1]), uint32(st[2]), uint32(st[4]), int64(st[3]), false)
}

func fdPwrite(ctx context.Context, s *State, m mem, st []uint64) Errno {
	if st[3] > math.MaxInt64-maxIO {
		return EINVAL
	}
	return fdRW(ctx, s, m, uint32(st[0]), uint32(st[1]), uint32(st[2]), uint32(st[4]), int64(st[3]), true)
}

func fdPrestatGet(_ context.Context, s *State, m mem, st []uint64) Errno {
	out, ok := m.bytes(uint32(st[1]), 8)
	if !ok {
		return EFAULT
	}
	pre := s.preopenOf(uint32(st[0]))
	if pre == nil {
		return EBADF
	}
	clear(out)
	binary.LittleEndian.PutUint32(out[4:], uint32(len(pre.path)))
	return ESUCCESS
}

func fdPrestatDirName(_ context.Context, s *State, m mem, st []uint64) Errno {
	pre := s.preopenOf(uint32(st[0]))
	if pre == nil {
		return EBADF
	}
	n := uint32(st[2])
	out, ok := m.bytes(uint32(st[1]), n)
	if !ok {
		return EFAULT
	}
	if int(n) < len(pre.path) {
		return ENAMETOOLONG
	}
	copy(out, pre.path)
	return ESUCCESS
}

// maxDirents bounds the entries fetched from the kernel per fd_readdir.
const maxDirents = 4096

func fdReaddir(ctx context.Context, s *State, m mem, st []uint64) Errno {
	fd, bufPtr, bufLen, cookie, usedPtr := uint32(st[0]), uint32(st[1]), uint32(st[2]), st[3], uint32(st[4])
	buf, ok := m.bytes(bufPtr, bufLen)
	if !ok || !m.valid(usedPtr, 4) {
		return EFAULT
	}
	if cookie > math.MaxInt64 {
		return EINVAL
	}
	f, e := s.file(fd)
	if e != ESUCCESS {
		return e
	}
	defer f.DecRef()
	if _, err := f.Seek(ctx, int64(cookie), vfs.SeekSet); err != nil {
		return ErrnoOf(err)
	}
	ents, err := f.ReadDir(ctx, int(min(maxDirents, bufLen/24+1)))
	if err != nil && len(ents) == 0 {
		return ErrnoOf(err)
	}
	used := 0
	var hdr [24]byte
	for _, d := range ents {
		binary.LittleEndian.PutUint64(hdr[0:], d.Next)
		binary.LittleEndian.PutUint64(hdr[8:], d.Ino)
		binary.LittleEndian.PutUint32(hdr[16:], uint32(len(d.Name)))
		clear(hdr[20:])
		hdr[20] = filetypeOf(d.Type)
		used += copy(buf[used:], hdr[:])
		used += copy(buf[used:], d.Name)
		if used == len(buf) {
			break
		}
	}
	m.putU32(usedPtr, uint32(used))
	return ESUCCESS
}

func fdRenumber(_ context.Context, s *State, _ mem, st []uint64) Errno {
	from, to := uint32(st[0]), uint32(st[1])
	if isTagged(from) || isTagged(to) {
		return EBADF
	}
	if err := s.P.Dup2(kfd(from), kfd(to), false); err != nil {
		return ErrnoOf(err)
	}
	if from != to {
		_ = s.P.Close(kfd(from))
	}
	return ESUCCESS
}

func fdSeek(ctx context.Context, s *State, m mem, st []uint64) Errno {
	fd, off, whence, outp := uint32(st[0]), int64(st[1]), uint8(st[2]), uint32(st[3])
	if !m.valid(outp, 8) {
		return EFAULT
	}
	if whence > 2 {
		return EINVAL
	}
	if isTagged(fd) {
		return EBADF
	}
	pos, err := s.P.Seek(ctx, kfd(fd), off, int(whence))
	if err != nil {
		return ErrnoOf(err)
	}
	m.putU64(outp, uint64(pos))
	return ESUCCESS
}

func fdTell(ctx context.Context, s *State, m mem, st []uint64) Errno {
	return fdSeek(ctx, s, m, []uint64{st[0], 0, vfs.SeekCur, st[1]})
}

func pathCreateDirectory(ctx context.Context, s *State, m mem, st []uint64) Errno {
	dirfd, p, e := s.pathArg(m, uint32(st[0]), uint32(st[1]), uint32(st[2]))
	if e != ESUCCESS {
		return e
	}
	// The kernel applies the umask: mkdir -m and umask 077 both work.
	return s.errOf(s.P.Mkdir(ctx, dirfd, p, 0o777))
}

func pathFilestatGet(ctx context.Context, s *State, m mem, st []uint64) Errno {
	out, ok := m.bytes(uint32(st[4]), 64)
	if !ok {
		return EFAULT
	}
	dirfd, p, e := s.pathArg(m, uint32(st[0]), uint32(st[2]), uint32(st[3]))
	if e != ESUCCESS {
		return e
	}
	fs, err := s.P.Stat(ctx, dirfd, p, uint32(st[1])&1 != 0)
	if err != nil {
		return s.errOf(err)
	}
	putFilestat(out, &fs)
	return ESUCCESS
}

func pathFilestatSetTimes(ctx context.Context, s *State, m mem, st []uint64) Errno {
	dirfd, p, e := s.pathArg(m, uint32(st[0]), uint32(st[2]), uint32(st[3]))
	if e != ESUCCESS {
		return e
	}
	a, e := timesAttr(s.P.Kernel().Clock().Now(), st[4], st[5], uint16(st[6]))
	if e != ESUCCESS {
		return e
	}
	follow := uint32(st[1])&1 != 0
	if a.Mask == 0 {
		_, err := s.P.Stat(ctx, dirfd, p, follow)
		return s.errOf(err)
	}
	return s.errOf(s.P.SetAttr(ctx, dirfd, p, follow, a))
}

func pathLink(ctx context.Context, s *State, m mem, st []uint64) Errno {
	odir, op, e := s.pathArg(m, uint32(st[0]), uint32(st[2]), uint32(st[3]))
	if e != ESUCCESS {
		return e
	}
	ndir, np, e := s.pathArg(m, uint32(st[4]), uint32(st[5]), uint32(st[6]))
	if e != ESUCCESS {
		return e
	}
	err := s.P.Link(ctx, odir, op, ndir, np)
	if errnoIs(err, ENOENT) && uint32(st[2]) == uint32(st[5]) && uint32(st[3]) == uint32(st[6]) {
		// Both paths are the same bytes of guest memory and the source
		// does not exist: the signature of the agentOS std's hard_link,
		// which passes the link's name for both paths. See linkSource.
		if src, ok := s.linkSource(ctx, ndir, np); ok {
			err = s.P.Link(ctx, kernel.AtFDCWD, src, ndir, np)
		}
	}
	return s.errOf(err)
}

func errnoIs(err error, e Errno) bool { return err != nil && ErrnoOf(err) == e }

// WASI oflags.
const (
	oflagCreat     = 1
	oflagDirectory = 2
	oflagExcl      = 4
	oflagTrunc     = 8
)

func pathOpen(ctx context.Context, s *State, m mem, st []uint64) Errno {
	fd, dirflags, pathPtr, pathLen := uint32(st[0]), uint32(st[1]), uint32(st[2]), uint32(st[3])
	oflags, rights, fdflags, outp := uint16(st[4]), st[5], uint16(st[7]), uint32(st[8])
	// The creation mode is one-shot: consumed by this open whatever
	// happens (agentOS ABI §8.1).
	mode := uint32(0o666)
	if s.openModeSet {
		mode = s.openMode
	}
	s.openModeSet = false
	if !m.valid(outp, 4) {
		return EFAULT
	}
	dirfd, p, e := s.pathArg(m, fd, pathPtr, pathLen)
	if e != ESUCCESS {
		return e
	}
	var fl vfs.OpenFlags
	switch r, w := rights&rightFDRead != 0, rights&rightFDWrite != 0; {
	case r && w:
		fl = vfs.O_RDWR
	case w:
		fl = vfs.O_WRONLY
	default:
		fl = vfs.O_RDONLY
	}
	if oflags&oflagCreat != 0 {
		fl |= vfs.O_CREAT
	}
	if oflags&oflagDirectory != 0 {
		fl |= vfs.O_DIRECTORY
	}
	if oflags&oflagExcl != 0 {
		fl |= vfs.O_EXCL
	}
	if oflags&oflagTrunc != 0 {
		fl |= vfs.O_TRUNC
	}
	if fdflags&fdflagAppend != 0 {
		fl |= vfs.O_APPEND
	}
	if fdflags&fdflagNonblock != 0 {
		fl |= vfs.O_NONBLOCK
	}
	if fdflags&(fdflagSync|fdflagRsync) != 0 {
		fl |= vfs.O_SYNC
	} else if fdflags&fdflagDsync != 0 {
		fl |= vfs.O_DSYNC
	}
	if dirflags&1 == 0 {
		fl |= vfs.O_NOFOLLOW
	}
	nfd, err := s.P.Open(ctx, dirfd, p, fl, mode&vfs.ModePerm)
	if err != nil {
		return s.errOf(err)
	}
	m.putU32(outp, uint32(nfd))
	return ESUCCESS
}

func pathReadlink(ctx context.Context, s *State, m mem, st []uint64) Errno {
	dirfd, p, e := s.pathArg(m, uint32(st[0]), uint32(st[1]), uint32(st[2]))
	if e != ESUCCESS {
		return e
	}
	buf, ok := m.bytes(uint32(st[3]), uint32(st[4]))
	if !ok || !m.valid(uint32(st[5]), 4) {
		return EFAULT
	}
	target, err := s.P.Readlink(ctx, dirfd, p)
	if err != nil {
		return s.errOf(err)
	}
	n := copy(buf, target)
	m.putU32(uint32(st[5]), uint32(n))
	return ESUCCESS
}

func pathRemoveDirectory(ctx context.Context, s *State, m mem, st []uint64) Errno {
	dirfd, p, e := s.pathArg(m, uint32(st[0]), uint32(st[1]), uint32(st[2]))
	if e != ESUCCESS {
		return e
	}
	return s.errOf(s.P.Unlink(ctx, dirfd, p, true))
}

func pathRename(ctx context.Context, s *State, m mem, st []uint64) Errno {
	odir, op, e := s.pathArg(m, uint32(st[0]), uint32(st[1]), uint32(st[2]))
	if e != ESUCCESS {
		return e
	}
	ndir, np, e := s.pathArg(m, uint32(st[3]), uint32(st[4]), uint32(st[5]))
	if e != ESUCCESS {
		return e
	}
	return s.errOf(s.P.Rename(ctx, odir, op, ndir, np))
}

func pathSymlink(ctx context.Context, s *State, m mem, st []uint64) Errno {
	target, e := m.path(uint32(st[0]), uint32(st[1]))
	if e != ESUCCESS {
		return e
	}
	dirfd, p, e := s.pathArg(m, uint32(st[2]), uint32(st[3]), uint32(st[4]))
	if e != ESUCCESS {
		return e
	}
	return s.errOf(s.P.Symlink(ctx, target, dirfd, p))
}

func pathUnlinkFile(ctx context.Context, s *State, m mem, st []uint64) Errno {
	dirfd, p, e := s.pathArg(m, uint32(st[0]), uint32(st[1]), uint32(st[2]))
	if e != ESUCCESS {
		return e
	}
	return s.errOf(s.P.Unlink(ctx, dirfd, p, false))
}

// poll_oneoff event types and flags.
const (
	eventClock    = 0
	eventFDRead   = 1
	eventFDWrite  = 2
	eventHangup   = 1
	subscrAbstime = 1
)

func pollOneoff(ctx context.Context, s *State, m mem, st []uint64) Errno {
	in, out, n, neventsPtr := uint32(st[0]), uint32(st[1]), uint32(st[2]), uint32(st[3])
	if n == 0 || n > maxSubscriptions {
		return EINVAL
	}
	subs, ok1 := m.bytes(in, n*48)
	evs, ok2 := m.bytes(out, n*32)
	if !ok1 || !ok2 || !m.valid(neventsPtr, 4) {
		return EFAULT
	}
	// The subscriptions are read before any event is written: in and out
	// may overlap.
	type sub struct {
		userdata uint64
		tag      uint8
		fd       uint32
		timeout  time.Duration
		err      Errno
	}
	list := make([]sub, n)
	var pfds []kernel.PollFD
	var pidx []int
	timeout := time.Duration(-1)
	clock := -1
	for i := range list {
		b := subs[i*48:]
		sb := sub{userdata: binary.LittleEndian.Uint64(b), tag: b[8]}
		switch sb.tag {
		case eventClock:
			id := binary.LittleEndian.Uint32(b[16:])
			t := binary.LittleEndian.Uint64(b[24:])
			flags := binary.LittleEndian.Uint16(b[40:])
			if flags&subscrAbstime != 0 {
				now, e := s.now(id)
				if e != ESUCCESS {
					sb.err = e
					break
				}
				if t > now {
					t -= now
				} else {
					t = 0
				}
			} else if _, e := s.now(id); e != ESUCCESS {
				sb.err = e
				break
			}
			sb.timeout = time.Duration(min(t, math.MaxInt64))
			if clock < 0 || sb.timeout < timeout {
				clock, timeout = i, sb.timeout
			}
		case eventFDRead, eventFDWrite:
			sb.fd = binary.LittleEndian.Uint32(b[16:])
			ev := kernel.PollFD{FD: kfd(sb.fd)}
			if isTagged(sb.fd) {
				ev.FD = -1
			}
			if sb.tag == eventFDRead {
				ev.Events = 0x01 // EventIn
			} else {
				ev.Events = 0x04 // EventOut
			}
			pfds = append(pfds, ev)
			pidx = append(pidx, i)
		default:
			sb.err = EINVAL
		}
		list[i] = sb
	}
	nev := 0
	put := func(sb sub, e Errno, nbytes uint64, flags uint16) {
		b := evs[nev*32 : nev*32+32]
		clear(b)
		binary.LittleEndian.PutUint64(b[0:], sb.userdata)
		binary.LittleEndian.PutUint16(b[8:], uint16(e))
		b[10] = sb.tag
		binary.LittleEndian.PutUint64(b[16:], nbytes)
		binary.LittleEndian.PutUint16(b[24:], flags)
		nev++
	}
	// Malformed subscriptions complete at once with their error.
	for _, sb := range list {
		if sb.err != ESUCCESS {
			put(sb, sb.err, 0, 0)
		}
	}
	if nev > 0 {
		m.putU32(neventsPtr, uint32(nev))
		return ESUCCESS
	}
	if len(pfds) == 0 {
		if err := s.P.Sleep(ctx, timeout); err != nil {
			s.checkKilled()
			return ErrnoOf(err)
		}
		put(list[clock], ESUCCESS, 0, 0)
		m.putU32(neventsPtr, uint32(nev))
		return ESUCCESS
	}
	if _, err := s.P.Poll(ctx, pfds, timeout); err != nil {
		s.checkKilled()
		return ErrnoOf(err)
	}
	for j, pf := range pfds {
		if pf.Revents == 0 {
			continue
		}
		sb := list[pidx[j]]
		switch {
		case pf.Revents&0x20 != 0: // POLLNVAL
			put(sb, EBADF, 0, 0)
		case sb.tag == eventFDRead:
			var fl uint16
			if pf.Revents&0x10 != 0 && pf.Revents&0x01 == 0 {
				fl = eventHangup
			}
			put(sb, ESUCCESS, 1, fl)
		default:
			if pf.Revents&0x08 != 0 && pf.Revents&0x04 == 0 {
				put(sb, EPIPE, 0, eventHangup)
			} else {
				put(sb, ESUCCESS, 65536, 0)
			}
		}
	}
	if nev == 0 && clock >= 0 {
		put(list[clock], ESUCCESS, 0, 0)
	}
	m.putU32(neventsPtr, uint32(nev))
	return ESUCCESS
}

func procExit(ctx context.Context, _ api.Module, stack []uint64) {
	// The runner turns the exit error into the process status (code &
	// 0xff); nothing of the guest runs after this call.
	panic(sys.NewExitError(uint32(stack[0])))
}

func procRaise(_ context.Context, s *State, _ mem, st []uint64) Errno {
	sig := kernel.Signal(uint32(st[0]))
	if err := s.P.Kill(s.P.PID(), sig); err != nil {
		return ErrnoOf(err)
	}
	s.checkKilled()
	return ESUCCESS
}

func schedYield(context.Context, *State, mem, []uint64) Errno {
	runtime.Gosched()
	return ESUCCESS
}

func randomGet(_ context.Context, _ *State, m mem, st []uint64) Errno {
	buf, ok := m.bytes(uint32(st[0]), uint32(st[1]))
	if !ok {
		return EFAULT
	}
	if _, err := rand.Read(buf); err != nil {
		return EIO
	}
	return ESUCCESS
}
