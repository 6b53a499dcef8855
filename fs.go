package secexec

import (
	"context"
	"fmt"
	"io"
	iofs "io/fs"
	"path"
	"time"

	"github.com/secexec/secexec/kernel/vfs"
)

// MaxFileTransfer bounds one ReadFile or WriteFile through the API, so a
// guest cannot make the host hold an unbounded payload.
const MaxFileTransfer = 256 << 20

// TooLargeError reports a payload over its limit.
type TooLargeError struct {
	What  string
	Size  int64
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("secexec: %s too large: %d bytes exceeds the limit of %d", e.What, e.Size, e.Limit)
}

// FS is a VM's filesystem, seen from the host. Operations act as root
// inside the VM (the embedder is trusted: permission rules govern guests),
// and files and directories the API creates belong to the guest user so
// guest programs can change them. Paths are absolute guest paths, or
// relative to the VM's working directory.
//
// The FS that AsGuest returns acts as the guest instead.
type FS struct {
	b backend
}

// AsGuest returns the VM's filesystem as its guest user sees it: every
// operation acts as the guest user (uid GuestUID) under the VM's
// permission policy, exactly as a guest process's system call would. The
// kernel resolves each path (symlinks followed in the guest's namespace,
// ".." never above the root, mounts crossed), checks the policy and the
// file modes on what it reached, and performs the operation on that same
// file in one walk: a guest that swaps a symlink or renames a directory
// meanwhile cannot make it touch anything its own open could not. Use it
// to act for a less trusted party, such as an agent's file tools, instead
// of checking a path and then acting on it as root.
//
// Watch is the guest's inotify: the policy and the file modes decide
// the watch and, below a recursive one, what it reports. Denials are
// errors matching fs.ErrPermission (a *policy.DeniedError from the
// policy, or EACCES/EPERM from the file modes); Mount and Unmount fail
// with EPERM, as they would for the guest. The two FS share the VM.
func (f *FS) AsGuest() *FS { return &FS{b: f.b.asGuest()} }

// Stat is the full attribute set of a guest file, Linux-shaped.
type Stat struct {
	// Mode is the Linux st_mode: type bits and permission bits.
	Mode  uint32
	Ino   uint64
	Nlink uint32
	UID   uint32
	GID   uint32
	Size  int64
	Atime time.Time
	Mtime time.Time
	Ctime time.Time
}

func statFromVFS(st vfs.Stat) Stat {
	return Stat{Mode: st.Mode, Ino: st.Ino, Nlink: st.Nlink, UID: st.UID, GID: st.GID, Size: st.Size,
		Atime: st.Atime, Mtime: st.Mtime, Ctime: st.Ctime}
}

// FileInfo describes a guest file. It implements io/fs.FileInfo; Sys
// returns the Stat.
type FileInfo struct {
	name string
	st   Stat
}

// Name is the base name.
func (fi *FileInfo) Name() string { return fi.name }

// Size is the length in bytes of a regular file.
func (fi *FileInfo) Size() int64 { return fi.st.Size }

// Mode converts the Linux mode to an io/fs.FileMode.
func (fi *FileInfo) Mode() iofs.FileMode { return fileMode(fi.st.Mode) }

// ModTime is the modification time.
func (fi *FileInfo) ModTime() time.Time { return fi.st.Mtime }

// IsDir reports whether the file is a directory.
func (fi *FileInfo) IsDir() bool { return vfs.TypeOf(fi.st.Mode) == vfs.TypeDir }

// Sys returns the Stat.
func (fi *FileInfo) Sys() any { return fi.st }

// Stat returns the Linux-shaped attributes.
func (fi *FileInfo) Stat() Stat { return fi.st }

func fileMode(m uint32) iofs.FileMode {
	mode := iofs.FileMode(m & 0o777)
	switch vfs.TypeOf(m) {
	case vfs.TypeDir:
		mode |= iofs.ModeDir
	case vfs.TypeSymlink:
		mode |= iofs.ModeSymlink
	case vfs.TypeFIFO:
		mode |= iofs.ModeNamedPipe
	case vfs.TypeSocket:
		mode |= iofs.ModeSocket
	case vfs.TypeCharDev:
		mode |= iofs.ModeDevice | iofs.ModeCharDevice
	case vfs.TypeBlock:
		mode |= iofs.ModeDevice
	}
	if m&vfs.S_ISUID != 0 {
		mode |= iofs.ModeSetuid
	}
	if m&vfs.S_ISGID != 0 {
		mode |= iofs.ModeSetgid
	}
	if m&vfs.S_ISVTX != 0 {
		mode |= iofs.ModeSticky
	}
	return mode
}

// DirEntry is one entry of ReadDir. It implements io/fs.DirEntry.
type DirEntry struct {
	name string
	typ  vfs.FileType
	info func() (*FileInfo, error)
}

// Name is the entry's name.
func (d DirEntry) Name() string { return d.name }

// IsDir reports whether the entry is a directory.
func (d DirEntry) IsDir() bool { return d.typ == vfs.TypeDir }

// Type returns the type bits as an io/fs.FileMode.
func (d DirEntry) Type() iofs.FileMode { return fileMode(uint32(d.typ)).Type() }

// Info returns the entry's FileInfo (an lstat of it).
func (d DirEntry) Info() (iofs.FileInfo, error) { return d.info() }

// ReadFile returns the contents of a file.
func (f *FS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	return f.b.readFile(ctx, name, MaxFileTransfer)
}

// WriteFile writes data to a file, creating it with perm (before umask)
// or truncating it.
func (f *FS) WriteFile(ctx context.Context, name string, data []byte, perm iofs.FileMode) error {
	if int64(len(data)) > MaxFileTransfer {
		return &TooLargeError{What: "file", Size: int64(len(data)), Limit: MaxFileTransfer}
	}
	return f.b.writeFile(ctx, name, data, uint32(perm.Perm()))
}

// MaxChunk is the most one ReadAt or WriteAt moves: the unit in which
// files are streamed without either side holding a whole file.
const MaxChunk = 1 << 20

// ReadAt reads len(p) bytes (at most MaxChunk) of the regular file name
// at offset off into p, as io.ReaderAt does: fewer bytes come only with
// io.EOF at the end of the file. Anything but a regular file (a device
// such as /dev/zero, a FIFO) is refused with EINVAL, a directory with
// EISDIR: the host never reads a stream that does not end.
func (f *FS) ReadAt(ctx context.Context, name string, p []byte, off int64) (int, error) {
	if len(p) > MaxChunk {
		return 0, &TooLargeError{What: "chunk", Size: int64(len(p)), Limit: MaxChunk}
	}
	data, err := f.b.readAt(ctx, name, off, len(p))
	if err != nil {
		return 0, err
	}
	n := copy(p, data)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt writes p (at most MaxChunk bytes) into the existing regular
// file name at offset off, without truncating it. With WriteFile of no
// data to create the file, a file is written in bounded pieces.
func (f *FS) WriteAt(ctx context.Context, name string, p []byte, off int64) error {
	if len(p) > MaxChunk {
		return &TooLargeError{What: "chunk", Size: int64(len(p)), Limit: MaxChunk}
	}
	return f.b.writeAt(ctx, name, off, p)
}

// MkdirAll creates a directory and any missing parents.
func (f *FS) MkdirAll(ctx context.Context, name string, perm iofs.FileMode) error {
	return f.b.mkdirAll(ctx, name, uint32(perm.Perm()))
}

// Mkdir creates one directory.
func (f *FS) Mkdir(ctx context.Context, name string, perm iofs.FileMode) error {
	return f.b.mkdir(ctx, name, uint32(perm.Perm()))
}

// ReadDir returns the entries of a directory sorted by name, without "."
// and "..".
func (f *FS) ReadDir(ctx context.Context, name string) ([]DirEntry, error) {
	return f.b.readDir(ctx, name)
}

// Stat returns the FileInfo of name, following symlinks.
func (f *FS) Stat(ctx context.Context, name string) (*FileInfo, error) {
	return f.b.stat(ctx, name, true)
}

// Lstat returns the FileInfo of name without following a final symlink.
func (f *FS) Lstat(ctx context.Context, name string) (*FileInfo, error) {
	return f.b.stat(ctx, name, false)
}

// Remove removes a file or an empty directory.
func (f *FS) Remove(ctx context.Context, name string) error { return f.b.remove(ctx, name, false) }

// RemoveAll removes name and everything beneath it. A missing name is not
// an error.
func (f *FS) RemoveAll(ctx context.Context, name string) error { return f.b.remove(ctx, name, true) }

// Rename renames (moves) oldname to newname, replacing newname.
func (f *FS) Rename(ctx context.Context, oldname, newname string) error {
	return f.b.rename(ctx, oldname, newname)
}

// Symlink creates newname as a symbolic link to oldname.
func (f *FS) Symlink(ctx context.Context, oldname, newname string) error {
	return f.b.symlink(ctx, oldname, newname)
}

// Readlink returns the target of a symbolic link.
func (f *FS) Readlink(ctx context.Context, name string) (string, error) {
	return f.b.readlink(ctx, name)
}

// Chmod changes the permission bits of name.
func (f *FS) Chmod(ctx context.Context, name string, mode iofs.FileMode) error {
	m := uint32(mode.Perm())
	if mode&iofs.ModeSetuid != 0 {
		m |= vfs.S_ISUID
	}
	if mode&iofs.ModeSetgid != 0 {
		m |= vfs.S_ISGID
	}
	if mode&iofs.ModeSticky != 0 {
		m |= vfs.S_ISVTX
	}
	return f.b.chmod(ctx, name, m)
}

// Mount mounts a host directory or a fresh memory filesystem at m.Path.
func (f *FS) Mount(ctx context.Context, m Mount) error { return f.b.mount(ctx, m) }

// Unmount removes the mount at guestPath.
func (f *FS) Unmount(ctx context.Context, guestPath string) error { return f.b.unmount(ctx, guestPath) }

func baseName(p string) string {
	if p == "/" {
		return "/"
	}
	return path.Base(p)
}
