// Package devfs is the /dev filesystem of a secexec VM: the character
// devices every POSIX program expects (null, zero, full, random, urandom,
// tty), the stdio symlinks into /proc/self/fd, and the empty /dev/shm and
// /dev/pts directories that the kernel may mount over later.
//
// The tree is fixed when the filesystem is made. Guests cannot add, remove,
// rename or chmod entries (EPERM, as an unprivileged Linux user gets in a
// devtmpfs), but they may read and write the devices, which is what
// programs need. Nothing here touches a host device: the random devices
// read the Go runtime's crypto/rand, the rest are synthesized in memory.
package devfs

import (
	"context"
	"crypto/rand"
	"io"
	"time"

	"github.com/secexec/secexec/kernel/vfs"
)

// Options configure a devfs. The zero value is ready to use.
type Options struct {
	// Now returns the time stamped on the inodes when the filesystem is
	// made and when their times change. Nil means time.Now; a VM with a
	// virtual clock passes its own so no host time shows through.
	Now func() time.Time
	// Random is the source of /dev/random and /dev/urandom. Nil means
	// crypto/rand.Reader, which is what a guest must get in production;
	// tests may substitute a deterministic reader. It must be safe for
	// concurrent use.
	Random io.Reader
	// Terminals, when set, makes /dev/tty the caller's controlling
	// terminal and lists the terminals in /dev/pts. Without it /dev/pts
	// is empty and opening /dev/tty fails with ENXIO.
	Terminals Terminals
}

// Device numbers of the devices, as Linux assigns them
// (Documentation/admin-guide/devices.txt).
var (
	DevNull    = Makedev(1, 3)
	DevZero    = Makedev(1, 5)
	DevFull    = Makedev(1, 7)
	DevRandom  = Makedev(1, 8)
	DevURandom = Makedev(1, 9)
	DevTTY     = Makedev(5, 0)
	DevPTMX    = Makedev(5, 2)
)

// Makedev encodes a major and minor number into a dev_t as glibc's
// makedev(3) does, so Stat.Rdev matches what a Linux program expects.
func Makedev(major, minor uint32) uint64 {
	ma, mi := uint64(major), uint64(minor)
	return (ma&0xfffff000)<<32 | (ma&0x00000fff)<<8 |
		(mi&0xffffff00)<<12 | (mi & 0x000000ff)
}

// Major returns the major number of a dev_t made by Makedev.
func Major(dev uint64) uint32 {
	return uint32((dev>>32)&0xfffff000 | (dev>>8)&0x00000fff)
}

// Minor returns the minor number of a dev_t made by Makedev.
func Minor(dev uint64) uint32 {
	return uint32((dev>>12)&0xffffff00 | dev&0x000000ff)
}

// tmpfsMagic is what statfs(2) reports for a Linux devtmpfs.
const tmpfsMagic = 0x01021994

// FS is a devfs instance. It is safe for concurrent use.
type FS struct {
	now    func() time.Time
	random io.Reader
	terms  Terminals
	root   *dir
	inodes uint64 // number of inodes, for Statfs
}

// New returns a devfs populated with the standard entries.
func New(opts Options) *FS {
	fs := &FS{now: opts.Now, random: opts.Random, terms: opts.Terminals}
	if fs.now == nil {
		fs.now = time.Now
	}
	if fs.random == nil {
		fs.random = rand.Reader
	}
	t := fs.now()
	var ino uint64
	next := func() uint64 { ino++; return ino }
	mk := func(mode uint32) meta {
		return meta{ino: next(), mode: mode, atime: t, mtime: t, ctime: t}
	}

	fs.root = &dir{fs: fs, meta: mk(vfs.S_IFDIR | 0o755)}
	shm := &dir{fs: fs, meta: mk(vfs.S_IFDIR | vfs.S_ISVTX | 0o777)}
	pts := &dir{fs: fs, meta: mk(vfs.S_IFDIR | 0o755)}
	dev := func(kind devKind, rdev uint64) *device {
		return &device{fs: fs, kind: kind, rdev: rdev, meta: mk(vfs.S_IFCHR | 0o666)}
	}
	link := func(target string) *symlink {
		return &symlink{target: target, meta: mk(vfs.S_IFLNK | 0o777)}
	}
	var ptsEntry, ttyEntry, ptmxEntry vfs.Inode = pts, dev(kindTTY, DevTTY), dev(kindPTMX, DevPTMX)
	if fs.terms != nil {
		ptsEntry = &ptsDir{dir: pts}
		ttyEntry = &termDevice{device: ttyEntry.(*device)}
		ptmxEntry = &termDevice{device: ptmxEntry.(*device)}
	}
	// Sorted by name, so ReadDir lists them as ls would.
	fs.root.entries = []entry{
		{"fd", link("/proc/self/fd")},
		{"full", dev(kindFull, DevFull)},
		{"null", dev(kindNull, DevNull)},
		{"ptmx", ptmxEntry},
		{"pts", ptsEntry},
		{"random", dev(kindRandom, DevRandom)},
		{"shm", shm},
		{"stderr", link("/proc/self/fd/2")},
		{"stdin", link("/proc/self/fd/0")},
		{"stdout", link("/proc/self/fd/1")},
		{"tty", ttyEntry},
		{"urandom", dev(kindURandom, DevURandom)},
		{"zero", dev(kindZero, DevZero)},
	}
	fs.inodes = ino
	return fs
}

// Root returns the /dev directory.
func (fs *FS) Root(context.Context) (vfs.Inode, error) { return fs.root, nil }

// Statfs reports a tmpfs-like filesystem with no free space: nothing can be
// created in it.
func (fs *FS) Statfs(context.Context) (vfs.Statfs, error) {
	return vfs.Statfs{
		Type:      tmpfsMagic,
		BlockSize: 4096,
		Files:     fs.inodes,
		NameMax:   vfs.NameMax,
	}, nil
}

// ReadOnly reports false: the devices accept writes, and the structural
// mutations fail with EPERM rather than EROFS, as on Linux.
func (fs *FS) ReadOnly() bool { return false }

// Release does nothing; a devfs holds no resources.
func (fs *FS) Release() error { return nil }
