package vfs

import (
	"context"
	"time"
)

// File type bits and permission bits of Stat.Mode, with Linux's values so the
// syscall layers can pass them through unchanged.
const (
	S_IFMT   = 0o170000 // mask of the type bits
	S_IFSOCK = 0o140000
	S_IFLNK  = 0o120000
	S_IFREG  = 0o100000
	S_IFBLK  = 0o060000
	S_IFDIR  = 0o040000
	S_IFCHR  = 0o020000
	S_IFIFO  = 0o010000
	S_ISUID  = 0o4000
	S_ISGID  = 0o2000
	S_ISVTX  = 0o1000
	ModePerm = 0o7777 // permission bits including setuid, setgid and sticky
)

// Limits of path resolution, as Linux has them.
const (
	PathMax     = 4096 // bytes in a path, including the terminating NUL Linux counts
	NameMax     = 255  // bytes in one path component
	MaxSymlinks = 40   // symlinks followed in one resolution before ELOOP
)

// FileType is the type of an inode, as encoded in the S_IFMT bits.
type FileType uint32

// File types.
const (
	TypeRegular FileType = S_IFREG
	TypeDir     FileType = S_IFDIR
	TypeSymlink FileType = S_IFLNK
	TypeCharDev FileType = S_IFCHR
	TypeBlock   FileType = S_IFBLK
	TypeFIFO    FileType = S_IFIFO
	TypeSocket  FileType = S_IFSOCK
)

// TypeOf returns the file type encoded in a full st_mode.
func TypeOf(mode uint32) FileType { return FileType(mode & S_IFMT) }

// Stat is the attribute set of an inode, shaped like Linux's struct stat.
type Stat struct {
	Dev     uint64 // filesystem id, assigned by the VFS per mount
	Ino     uint64 // inode number, unique within one filesystem
	Mode    uint32 // type bits | permission bits
	Nlink   uint32
	UID     uint32
	GID     uint32
	Rdev    uint64 // device number of a character or block device
	Size    int64
	Blksize int32
	Blocks  int64 // 512-byte blocks allocated
	Atime   time.Time
	Mtime   time.Time
	Ctime   time.Time
}

// Type returns the file type of the inode.
func (s *Stat) Type() FileType { return TypeOf(s.Mode) }

// Statfs describes a filesystem's capacity, for statfs(2) and df.
type Statfs struct {
	Type       uint64 // magic number, e.g. 0x01021994 for tmpfs
	BlockSize  int64
	Blocks     uint64
	BlocksFree uint64
	Files      uint64
	FilesFree  uint64
	NameMax    uint64
	ReadOnly   bool
}

// SetAttrMask selects which fields of SetAttr apply.
type SetAttrMask uint32

// Bits of SetAttrMask.
const (
	SetMode SetAttrMask = 1 << iota
	SetUID
	SetGID
	SetSize
	SetAtime
	SetMtime
	SetCtime // set by the VFS itself whenever it changes an inode's metadata
)

// SetAttr changes inode attributes: chmod, chown, truncate and utimes in one
// call, so a filesystem updates them under one lock.
type SetAttr struct {
	Mask  SetAttrMask
	Mode  uint32 // permission bits only; the type bits are ignored
	UID   uint32
	GID   uint32
	Size  int64
	Atime time.Time
	Mtime time.Time
}

// CreateOptions describes a new inode.
type CreateOptions struct {
	Mode uint32 // type bits | permission bits, already masked by the umask
	UID  uint32
	GID  uint32
	Rdev uint64 // device number, for Mknod of devices
}

// Dirent is one directory entry as ReadDir returns it.
type Dirent struct {
	Name string
	Ino  uint64
	Type FileType
	// Next is the cookie that resumes reading after this entry. Cookies
	// stay valid while the directory changes: an entry that exists for the
	// whole iteration is returned exactly once.
	Next uint64
}

// OpenFlags are the flags of open(2) that reach a filesystem. Access mode
// and O_TRUNC are handled by the VFS; a filesystem sees them only to decide
// how to open its handle.
type OpenFlags uint32

// Linux open(2) flag values.
const (
	O_RDONLY    OpenFlags = 0
	O_WRONLY    OpenFlags = 1
	O_RDWR      OpenFlags = 2
	O_ACCMODE   OpenFlags = 3
	O_CREAT     OpenFlags = 0o100
	O_EXCL      OpenFlags = 0o200
	O_NOCTTY    OpenFlags = 0o400
	O_TRUNC     OpenFlags = 0o1000
	O_APPEND    OpenFlags = 0o2000
	O_NONBLOCK  OpenFlags = 0o4000
	O_DSYNC     OpenFlags = 0o10000
	O_DIRECTORY OpenFlags = 0o200000
	O_NOFOLLOW  OpenFlags = 0o400000
	O_CLOEXEC   OpenFlags = 0o2000000
	O_SYNC      OpenFlags = 0o4010000
	O_PATH      OpenFlags = 0o10000000
)

// Readable reports whether the access mode allows reading.
func (f OpenFlags) Readable() bool { return f&O_ACCMODE == O_RDONLY || f&O_ACCMODE == O_RDWR }

// Writable reports whether the access mode allows writing.
func (f OpenFlags) Writable() bool { return f&O_ACCMODE == O_WRONLY || f&O_ACCMODE == O_RDWR }

// FileSystem is one mountable filesystem: the memory filesystem, a host
// directory, the overlay root, /dev, /proc. Path resolution, mounts,
// symlink following, permission policy and DAC checks all live in the VFS;
// a FileSystem only answers per-directory questions about its own inodes,
// so a backend can never be asked to walk outside itself.
type FileSystem interface {
	// Root returns the root directory inode.
	Root(ctx context.Context) (Inode, error)
	// Statfs reports capacity.
	Statfs(ctx context.Context) (Statfs, error)
	// ReadOnly reports whether every mutation fails with EROFS.
	ReadOnly() bool
	// Release frees the filesystem's resources after it was unmounted.
	Release() error
}

// Inode is a file of a FileSystem. Methods that make no sense for the
// inode's type return the errno Linux would (ENOTDIR for directory
// operations on a file, EINVAL for Readlink of a non-symlink, EISDIR for
// opening a directory for writing). Embed Unsupported to get those defaults.
//
// Names passed to directory methods are single components: never empty,
// never "." or "..", never containing '/' or NUL, at most NameMax bytes. The
// VFS guarantees that; backends may rely on it.
type Inode interface {
	// Stat returns the inode's attributes. Dev is filled in by the VFS.
	Stat(ctx context.Context) (Stat, error)
	// SetAttr changes attributes selected by attr.Mask. Permission checks
	// are done by the VFS; the filesystem only applies the change (and
	// returns EROFS if it is read-only). SetSize on a directory is EISDIR.
	SetAttr(ctx context.Context, attr SetAttr) error

	// Lookup returns the child called name, or ENOENT.
	Lookup(ctx context.Context, name string) (Inode, error)
	// Create makes a new regular file, FIFO, socket or device (per the type
	// bits of opts.Mode) called name, or fails with EEXIST if name exists.
	Create(ctx context.Context, name string, opts CreateOptions) (Inode, error)
	// Mkdir makes a directory called name, or fails with EEXIST.
	Mkdir(ctx context.Context, name string, opts CreateOptions) (Inode, error)
	// Symlink makes a symbolic link called name pointing at target.
	Symlink(ctx context.Context, name, target string, opts CreateOptions) (Inode, error)
	// Link makes name a new hard link to target, which the VFS has checked
	// is an inode of the same FileSystem and not a directory.
	Link(ctx context.Context, name string, target Inode) error
	// Unlink removes the non-directory name (EISDIR for a directory).
	Unlink(ctx context.Context, name string) error
	// Rmdir removes the empty directory name (ENOTEMPTY, ENOTDIR).
	Rmdir(ctx context.Context, name string) error
	// Rename moves oldName in this directory to newName in newDir, which
	// the VFS has checked belongs to the same FileSystem. It is atomic and
	// replaces an existing target as rename(2) does: a file replaces a file,
	// a directory replaces an empty directory (ENOTEMPTY otherwise), mixed
	// types fail with EISDIR or ENOTDIR. The VFS rejects moving a directory
	// beneath itself (EINVAL) before calling.
	Rename(ctx context.Context, oldName string, newDir Inode, newName string) error
	// ReadDir returns up to max entries starting at cookie (0 = the
	// beginning), without "." and "..". An empty result means the end.
	ReadDir(ctx context.Context, cookie uint64, max int) ([]Dirent, error)

	// Readlink returns a symlink's target (EINVAL if not a symlink).
	Readlink(ctx context.Context) (string, error)

	// Open returns a handle for reading and writing the inode's data. The
	// VFS calls it only for regular files and devices; directories are read
	// with ReadDir, and FIFOs are served by the kernel's pipes.
	Open(ctx context.Context, flags OpenFlags) (Handle, error)
}

// Handle is an open data stream of an inode. The VFS keeps the file offset
// (shared by every fd of one open file description) and passes it in.
type Handle interface {
	// ReadAt reads at off. It returns 0, nil at end of file (no io.EOF:
	// errors are errnos only).
	ReadAt(ctx context.Context, p []byte, off int64) (int, error)
	// WriteAt writes at off, growing the file as needed.
	WriteAt(ctx context.Context, p []byte, off int64) (int, error)
	// Append writes p at the end of the file atomically with respect to
	// every other writer of the inode (O_APPEND), and returns the new size.
	Append(ctx context.Context, p []byte) (n int, end int64, err error)
	// Sync flushes to stable storage where that means anything.
	Sync(ctx context.Context) error
	// Close releases the handle.
	Close() error
}

// StreamHandle is implemented by handles of non-seekable files (character
// devices such as /dev/zero): the VFS ignores offsets for them and reports
// ESPIPE to pread/pwrite/lseek.
type StreamHandle interface {
	Handle
	// Stream is a marker: it reports true.
	Stream() bool
}

// FileOpener is implemented by character devices whose open makes a
// kernel object instead of a data stream of the inode: /dev/tty opens the
// caller's terminal, /dev/pts/N a terminal's slave side. The VFS calls
// OpenFile after its permission checks and returns its File as is.
type FileOpener interface {
	OpenFile(ctx context.Context, flags OpenFlags) (File, error)
}

// MagicLink is implemented by symlink inodes whose target depends on the
// caller, such as /proc/self and /proc/PID/fd/N. The VFS asks it instead of
// Readlink while resolving a path.
type MagicLink interface {
	// Resolve returns what the link designates for the calling process:
	// either a guest path to continue resolution from (absolute), or an
	// already open file that opening the link must share (a pipe has no
	// path). Exactly one of path and file is set.
	Resolve(ctx context.Context) (path string, file File, err error)
}

// Unsupported is embedded by Inode implementations to get the Linux errno
// of every operation their type does not support. It is meant for
// non-directory, non-symlink inodes; directories override the directory
// methods.
type Unsupported struct{}

// SetAttr fails with EPERM.
func (Unsupported) SetAttr(context.Context, SetAttr) error { return errPERM }

// Lookup fails with ENOTDIR.
func (Unsupported) Lookup(context.Context, string) (Inode, error) { return nil, errNOTDIR }

// Create fails with ENOTDIR.
func (Unsupported) Create(context.Context, string, CreateOptions) (Inode, error) {
	return nil, errNOTDIR
}

// Mkdir fails with ENOTDIR.
func (Unsupported) Mkdir(context.Context, string, CreateOptions) (Inode, error) {
	return nil, errNOTDIR
}

// Symlink fails with ENOTDIR.
func (Unsupported) Symlink(context.Context, string, string, CreateOptions) (Inode, error) {
	return nil, errNOTDIR
}

// Link fails with ENOTDIR.
func (Unsupported) Link(context.Context, string, Inode) error { return errNOTDIR }

// Unlink fails with ENOTDIR.
func (Unsupported) Unlink(context.Context, string) error { return errNOTDIR }

// Rmdir fails with ENOTDIR.
func (Unsupported) Rmdir(context.Context, string) error { return errNOTDIR }

// Rename fails with ENOTDIR.
func (Unsupported) Rename(context.Context, string, Inode, string) error { return errNOTDIR }

// ReadDir fails with ENOTDIR.
func (Unsupported) ReadDir(context.Context, uint64, int) ([]Dirent, error) { return nil, errNOTDIR }

// Readlink fails with EINVAL.
func (Unsupported) Readlink(context.Context) (string, error) { return "", errINVAL }

// Open fails with ENXIO.
func (Unsupported) Open(context.Context, OpenFlags) (Handle, error) { return nil, errNXIO }
