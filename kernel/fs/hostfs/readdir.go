package hostfs

import (
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"hash/maphash"
	"io"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// Directory reading. The VFS needs cookies that survive concurrent creates
// and deletes: an entry present for the whole iteration is returned exactly
// once. Two strategies provide them:
//
//   - Offsets: the cookie is getdents64's d_off, resumed with lseek. On
//     filesystems whose directory offsets are stable positions (ext2/3/4
//     hash cookies, XFS, btrfs indexes, tmpfs since Linux 6.6) this is the
//     guarantee telldir/seekdir and NFS rely on, at O(k) per call.
//   - Hashed, for every other filesystem (overlayfs merged directories and
//     older tmpfs count positions, which shift as entries come and go): the
//     cookie is a keyed hash of the name, and each call returns the entries
//     with the smallest hashes above the cookie. An entry's hash never
//     changes, so the sequence is stable whatever else changes; the cost is
//     a full directory scan per call, with memory bounded by the batch.
//     The hash is keyed per FS with a random seed, so a guest cannot craft
//     two names that collide (a collision would hide one of them).

const (
	// maxDirents bounds the entries of one ReadDir call, whatever the
	// caller asks for, so one call's memory stays small.
	maxDirents = 1024
	// direntBufSize is the getdents64 buffer of a full batch.
	direntBufSize = 32 << 10
	// maxDirentSize is the largest linux_dirent64 record: the 19-byte
	// header, a 255-byte name and its NUL, rounded up to 8.
	maxDirentSize = 280
)

// stableDirOffsets reports whether the filesystem holding fd keeps
// directory offsets stable while the directory changes.
func stableDirOffsets(fd int) bool {
	var s unix.Statfs_t
	if unix.Fstatfs(fd, &s) != nil {
		return false
	}
	switch int64(s.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC:
		return true
	case unix.TMPFS_MAGIC:
		// tmpfs got stable directory offsets in Linux 6.6.
		return kernelAtLeast(6, 6)
	}
	return false
}

// kernelAtLeast reports whether the running kernel is at least major.minor.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	maj, mnr, ok := parseRelease(unix.ByteSliceToString(u.Release[:]))
	return ok && (maj > major || maj == major && mnr >= minor)
}

// parseRelease extracts major and minor from a release such as
// "6.18.44-generic".
func parseRelease(rel string) (major, minor int, ok bool) {
	num := func(s string) (int, string, bool) {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		v, err := strconv.Atoi(s[:i])
		return v, s[i:], err == nil
	}
	major, rest, ok1 := num(rel)
	if !ok1 || !strings.HasPrefix(rest, ".") {
		return 0, 0, false
	}
	minor, _, ok2 := num(rest[1:])
	if !ok2 {
		return 0, 0, false
	}
	return major, minor, true
}

// rawDirent is one decoded linux_dirent64 record.
type rawDirent struct {
	ino  uint64
	off  int64
	typ  uint8
	name string
}

// parseDirents decodes the linux_dirent64 records of buf, calling fn for
// each until it returns false. A malformed record is EIO: buf comes from
// the host kernel, but the decoder must not trust it with an index.
func parseDirents(buf []byte, fn func(rawDirent) bool) error {
	const hdr = 19 // d_ino(8) d_off(8) d_reclen(2) d_type(1)
	for len(buf) > 0 {
		if len(buf) < hdr {
			return errno.EIO
		}
		reclen := int(binary.NativeEndian.Uint16(buf[16:18]))
		if reclen <= hdr || reclen > len(buf) {
			return errno.EIO
		}
		rec := buf[:reclen]
		nameBytes := rec[hdr:]
		end := slices.Index(nameBytes, 0)
		if end < 0 {
			return errno.EIO
		}
		d := rawDirent{
			ino:  binary.NativeEndian.Uint64(rec[0:8]),
			off:  int64(binary.NativeEndian.Uint64(rec[8:16])),
			typ:  rec[18],
			name: string(nameBytes[:end]),
		}
		buf = buf[reclen:]
		if !fn(d) {
			return nil
		}
	}
	return nil
}

// direntType converts a d_type; ok is false for DT_UNKNOWN.
func direntType(t uint8) (vfs.FileType, bool) {
	switch t {
	case unix.DT_REG:
		return vfs.TypeRegular, true
	case unix.DT_DIR:
		return vfs.TypeDir, true
	case unix.DT_LNK:
		return vfs.TypeSymlink, true
	case unix.DT_FIFO:
		return vfs.TypeFIFO, true
	case unix.DT_SOCK:
		return vfs.TypeSocket, true
	case unix.DT_CHR:
		return vfs.TypeCharDev, true
	case unix.DT_BLK:
		return vfs.TypeBlock, true
	}
	return 0, false
}

// fillType sets e.Type from d_type, asking fstatat when the filesystem did
// not say; ok is false if the entry vanished meanwhile.
func fillType(dirfd int, e *vfs.Dirent, dt uint8) (ok bool, err error) {
	if t, ok := direntType(dt); ok {
		e.Type = t
		return true, nil
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, e.Name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err == unix.ENOENT {
			return false, nil
		}
		return false, hostErr(err)
	}
	e.Type = vfs.TypeOf(st.Mode)
	return true, nil
}

func getdents(fd int, buf []byte) (int, error) {
	var n int
	err := ignoringEINTR(func() (err error) {
		n, err = unix.Getdents(fd, buf)
		return err
	})
	return n, hostErr(err)
}

// ReadDir returns up to max entries after cookie (0 = the beginning),
// without "." and "..".
func (n *inode) ReadDir(ctx context.Context, cookie uint64, max int) ([]vfs.Dirent, error) {
	if max <= 0 {
		return nil, errno.EINVAL
	}
	max = min(max, maxDirents)
	if err := n.fs.enter(); err != nil {
		return nil, err
	}
	defer n.fs.exit()
	fd, err := n.fs.openBeneath(n.path, unix.O_RDONLY|unix.O_DIRECTORY)
	if err == errno.ENOENT {
		// The directory was removed (or moved away) while the guest had
		// it open; Linux reads a removed directory as empty.
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if n.fs.q.hashedReaddir {
		return n.fs.readDirHashed(ctx, fd, cookie, max)
	}
	return readDirOffsets(ctx, fd, cookie, max)
}

// readDirOffsets resumes at a d_off cookie.
func readDirOffsets(ctx context.Context, fd int, cookie uint64, max int) ([]vfs.Dirent, error) {
	if cookie != 0 {
		// The cast round-trips: cookies are d_off values, which are
		// int64 on the host.
		if _, err := unix.Seek(fd, int64(cookie), io.SeekStart); err != nil {
			return nil, hostErr(err)
		}
	}
	buf := make([]byte, min(direntBufSize, max*maxDirentSize))
	var out []vfs.Dirent
	for {
		if ctx.Err() != nil {
			return nil, errno.EINTR
		}
		nb, err := getdents(fd, buf)
		if err != nil {
			return nil, err
		}
		if nb == 0 {
			return out, nil
		}
		var ferr error
		err = parseDirents(buf[:nb], func(d rawDirent) bool {
			if d.name == "." || d.name == ".." {
				return true
			}
			e := vfs.Dirent{Name: d.name, Ino: d.ino, Next: uint64(d.off)}
			ok, err := fillType(fd, &e, d.typ)
			if err != nil {
				ferr = err
				return false
			}
			if ok {
				out = append(out, e)
			}
			return len(out) < max
		})
		if err == nil {
			err = ferr
		}
		if err != nil {
			return nil, err
		}
		// Stop after the first batch that had anything to return: an
		// empty result would mean the end of the directory.
		if len(out) > 0 {
			return out, nil
		}
	}
}

// hashCookie is the cookie of name in hashed mode. It is never 0 (which
// means "the beginning") and stays below 2^62, leaving the VFS room to
// shift cookies past its own "." and "..".
func (fs *FS) hashCookie(name string) uint64 {
	return maphash.String(fs.seed, name)>>2 + 1
}

// hashedEntry is a candidate of readDirHashed.
type hashedEntry struct {
	cookie uint64
	ino    uint64
	typ    uint8
	name   string
}

// maxHeap keeps the smallest cookies seen, largest on top.
type maxHeap []hashedEntry

func (h maxHeap) Len() int           { return len(h) }
func (h maxHeap) Less(i, j int) bool { return h[i].cookie > h[j].cookie }
func (h maxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)        { *h = append(*h, x.(hashedEntry)) }
func (h *maxHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// readDirHashed returns the max entries with the smallest hash cookies
// above cookie.
func (fs *FS) readDirHashed(ctx context.Context, fd int, cookie uint64, max int) ([]vfs.Dirent, error) {
	buf := make([]byte, direntBufSize)
	for {
		if _, err := unix.Seek(fd, 0, io.SeekStart); err != nil {
			return nil, hostErr(err)
		}
		h, err := fs.scanHashed(ctx, fd, buf, cookie, max)
		if err != nil {
			return nil, err
		}
		out := make([]vfs.Dirent, 0, len(h))
		for _, c := range h {
			e := vfs.Dirent{Name: c.name, Ino: c.ino, Next: c.cookie}
			ok, err := fillType(fd, &e, c.typ)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, e)
			}
		}
		if len(out) > 0 || len(h) == 0 {
			return out, nil
		}
		// Every candidate vanished while we looked; carry on after them
		// rather than report a premature end. Each round moves the cookie
		// forward, so this ends.
		cookie = h[len(h)-1].cookie
	}
}

// scanHashed reads the whole directory and returns, sorted, the max
// entries with the smallest cookies above cookie.
func (fs *FS) scanHashed(ctx context.Context, fd int, buf []byte, cookie uint64, max int) (maxHeap, error) {
	h := make(maxHeap, 0, min(max, 64))
	for {
		if ctx.Err() != nil {
			return nil, errno.EINTR
		}
		nb, err := getdents(fd, buf)
		if err != nil {
			return nil, err
		}
		if nb == 0 {
			break
		}
		err = parseDirents(buf[:nb], func(d rawDirent) bool {
			if d.name == "." || d.name == ".." {
				return true
			}
			c := fs.hashCookie(d.name)
			if c <= cookie {
				return true
			}
			e := hashedEntry{cookie: c, ino: d.ino, typ: d.typ, name: d.name}
			if h.Len() < max {
				heap.Push(&h, e)
			} else if c < h[0].cookie {
				h[0] = e
				heap.Fix(&h, 0)
			}
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(h, func(a, b hashedEntry) int { return cmp.Compare(a.cookie, b.cookie) })
	return h, nil
}
