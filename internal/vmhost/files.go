package vmhost

import (
	"context"
	"io"
	"path"
	"sort"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// Files are the file operations of a hosted VM as one party performs
// them, through the kernel's VFS: the same path walk, permission checks
// and file semantics as a guest's system calls.
//
// The host's Files (the Host's own methods) act as root inside the VM,
// outside the permission policy (the embedder is trusted; rules govern
// guests), and what they create belongs to the guest user from the start
// (vfs.Caller.Owner). The guest's
// Files (Host.Guest) act as the VM's user under the VM's policy, as a
// guest process would: every path is resolved, symlinks followed in the
// guest's namespace, and the policy checked on the path reached, in one
// walk that then performs the operation on what it reached. A symlink the
// guest swaps meanwhile cannot send the operation anywhere the guest's own
// open would not reach; denials are *policy.DeniedError or errno.EACCES
// or EPERM, which all match fs.ErrPermission.
type Files struct {
	h      *Host
	caller *vfs.Caller
	guest  bool
}

// FileOps are the operations of Files, offered alike by a VM in this
// process and by one in an engine process (client.Files).
type FileOps interface {
	ReadFile(ctx context.Context, name string, limit int64) ([]byte, error)
	WriteFile(ctx context.Context, name string, data []byte, perm uint32) error
	ReadAt(ctx context.Context, name string, off int64, n int) ([]byte, error)
	WriteAt(ctx context.Context, name string, off int64, data []byte) error
	Mkdir(ctx context.Context, name string, perm uint32) error
	MkdirAll(ctx context.Context, name string, perm uint32) error
	ReadDir(ctx context.Context, name string) (string, []DirEntry, error)
	Stat(ctx context.Context, name string, follow bool) (vfs.Stat, error)
	Remove(ctx context.Context, name string, all bool) error
	Rename(ctx context.Context, oldname, newname string) error
	Symlink(ctx context.Context, target, link string) error
	Readlink(ctx context.Context, name string) (string, error)
	Chmod(ctx context.Context, name string, mode uint32) error
	Watch(ctx context.Context, name string, recursive bool) (io.ReadCloser, error)
}

var _ FileOps = (*Files)(nil)

// Guest returns the file operations of the VM's guest user under the
// VM's policy (see Files).
func (h *Host) Guest() FileOps { return h.guest }

// begin checks that the VM is open and marks a guest's calls as the
// guest's for the VM's policy (vm.AsGuest).
func (fs *Files) begin(ctx context.Context) (context.Context, error) {
	if err := fs.h.check(); err != nil {
		return ctx, err
	}
	if fs.guest {
		ctx = vm.AsGuest(ctx)
	}
	return ctx, nil
}

// ReadFile returns the contents of a file, failing with *TooLargeError
// past limit bytes.
func (fs *Files) ReadFile(ctx context.Context, name string, limit int64) ([]byte, error) {
	ctx, err := fs.begin(ctx)
	if err != nil {
		return nil, err
	}
	f, err := fs.h.vm.VFS.Open(ctx, fs.caller, name, vfs.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.DecRef()
	st, err := f.Stat(ctx)
	if err != nil {
		return nil, errno.Path("read", name, err)
	}
	if st.Type() == vfs.TypeDir {
		return nil, errno.Path("read", name, errno.EISDIR)
	}
	if st.Size > limit {
		return nil, &TooLargeError{What: "file " + name, Size: st.Size, Limit: limit}
	}
	buf := make([]byte, 0, max(st.Size, 512))
	for {
		if int64(len(buf)) > limit {
			return nil, &TooLargeError{What: "file " + name, Size: int64(len(buf)), Limit: limit}
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(ctx, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return nil, errno.Path("read", name, err)
		}
		if n == 0 {
			return buf, nil
		}
	}
}

// MaxChunk bounds one ReadAt or WriteAt: the unit in which files are
// streamed, so that neither side ever holds more than this of a file.
const MaxChunk = 1 << 20

// ReadAt reads up to n bytes (at most MaxChunk) of the regular file name
// at offset off; fewer bytes (none at the end) mean the end of the file.
// Anything but a regular file (a device such as /dev/zero, a FIFO, a
// directory) is refused with EINVAL (EISDIR for a directory): a stream
// that never ends must not be read by the host.
func (fs *Files) ReadAt(ctx context.Context, name string, off int64, n int) ([]byte, error) {
	ctx, err := fs.begin(ctx)
	if err != nil {
		return nil, err
	}
	if off < 0 || n < 0 {
		return nil, errno.Path("read", name, errno.EINVAL)
	}
	n = min(n, MaxChunk)
	f, err := fs.h.vm.VFS.Open(ctx, fs.caller, name, vfs.O_RDONLY|vfs.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.DecRef()
	st, err := f.Stat(ctx)
	if err != nil {
		return nil, errno.Path("read", name, err)
	}
	switch st.Type() {
	case vfs.TypeRegular:
	case vfs.TypeDir:
		return nil, errno.Path("read", name, errno.EISDIR)
	default:
		return nil, errno.Path("read", name, errno.EINVAL)
	}
	buf := make([]byte, n)
	got := 0
	for got < n {
		m, err := f.Pread(ctx, buf[got:], off+int64(got))
		got += m
		if err != nil {
			return nil, errno.Path("read", name, err)
		}
		if m == 0 {
			break
		}
	}
	return buf[:got], nil
}

// WriteAt writes data (at most MaxChunk bytes) into the existing regular
// file name at offset off, without truncating it: with WriteFile of no
// data first, a file is written in bounded pieces.
func (fs *Files) WriteAt(ctx context.Context, name string, off int64, data []byte) error {
	ctx, err := fs.begin(ctx)
	if err != nil {
		return err
	}
	if off < 0 {
		return errno.Path("write", name, errno.EINVAL)
	}
	if len(data) > MaxChunk {
		return &TooLargeError{What: "chunk", Size: int64(len(data)), Limit: MaxChunk}
	}
	f, err := fs.h.vm.VFS.Open(ctx, fs.caller, name, vfs.O_WRONLY|vfs.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.DecRef()
	st, err := f.Stat(ctx)
	if err != nil {
		return errno.Path("write", name, err)
	}
	if st.Type() != vfs.TypeRegular {
		return errno.Path("write", name, errno.EINVAL)
	}
	for len(data) > 0 {
		n, err := f.Pwrite(ctx, data, off)
		if err != nil {
			return errno.Path("write", name, err)
		}
		if n == 0 {
			return errno.Path("write", name, errno.EIO)
		}
		data, off = data[n:], off+int64(n)
	}
	return nil
}

// WriteFile writes data to a file, creating it with perm (before umask)
// or truncating it.
func (fs *Files) WriteFile(ctx context.Context, name string, data []byte, perm uint32) error {
	ctx, err := fs.begin(ctx)
	if err != nil {
		return err
	}
	f, err := fs.h.vm.VFS.Open(ctx, fs.caller, name, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, perm)
	if err != nil {
		return err
	}
	defer f.DecRef()
	for len(data) > 0 {
		n, err := f.Write(ctx, data)
		if err != nil {
			return errno.Path("write", name, err)
		}
		data = data[n:]
	}
	return nil
}

// Mkdir creates one directory.
func (fs *Files) Mkdir(ctx context.Context, name string, perm uint32) error {
	ctx, err := fs.begin(ctx)
	if err != nil {
		return err
	}
	return fs.h.vm.VFS.Mkdir(ctx, fs.caller, name, perm)
}

// MkdirAll creates a directory and any missing parents.
func (fs *Files) MkdirAll(ctx context.Context, name string, perm uint32) error {
	ctx, err := fs.begin(ctx)
	if err != nil {
		return err
	}
	if !path.IsAbs(name) {
		name = path.Join(fs.h.cwd, name)
	}
	name = path.Clean(name)
	st, err := fs.h.vm.VFS.Stat(ctx, fs.caller, name)
	if err == nil {
		if st.Type() != vfs.TypeDir {
			return errno.Path("mkdir", name, errno.ENOTDIR)
		}
		return nil
	}
	if errno.Of(err) != errno.ENOENT {
		return err
	}
	if parent := path.Dir(name); parent != name {
		if err := fs.MkdirAll(ctx, parent, perm); err != nil {
			return err
		}
	}
	if err := fs.h.vm.VFS.Mkdir(ctx, fs.caller, name, perm); err != nil && errno.Of(err) != errno.EEXIST {
		return err
	}
	return nil
}

// DirEntry is one entry of ReadDir.
type DirEntry struct {
	Name string
	Type vfs.FileType
}

// ReadDir returns the entries of a directory sorted by name, without "."
// and "..", and the directory's resolved path (for lstat of an entry).
func (fs *Files) ReadDir(ctx context.Context, name string) (string, []DirEntry, error) {
	ctx, err := fs.begin(ctx)
	if err != nil {
		return "", nil, err
	}
	f, err := fs.h.vm.VFS.Open(ctx, fs.caller, name, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return "", nil, err
	}
	defer f.DecRef()
	dir := f.Path()
	var out []DirEntry
	for {
		ents, err := f.ReadDir(ctx, 256)
		if err != nil {
			return "", nil, errno.Path("readdir", name, err)
		}
		if len(ents) == 0 {
			break
		}
		for _, e := range ents {
			if e.Name == "." || e.Name == ".." {
				continue
			}
			out = append(out, DirEntry{Name: e.Name, Type: e.Type})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return dir, out, nil
}

// Stat returns the attributes of name, following a final symlink if
// follow.
func (fs *Files) Stat(ctx context.Context, name string, follow bool) (vfs.Stat, error) {
	ctx, err := fs.begin(ctx)
	if err != nil {
		return vfs.Stat{}, err
	}
	if follow {
		return fs.h.vm.VFS.Stat(ctx, fs.caller, name)
	}
	return fs.h.vm.VFS.Lstat(ctx, fs.caller, name)
}

// Remove removes a file or an empty directory; with all, name and
// everything beneath it, a missing name not being an error.
func (fs *Files) Remove(ctx context.Context, name string, all bool) error {
	ctx, err := fs.begin(ctx)
	if err != nil {
		return err
	}
	st, err := fs.h.vm.VFS.Lstat(ctx, fs.caller, name)
	if err != nil {
		if all && errno.Of(err) == errno.ENOENT {
			return nil
		}
		return err
	}
	if st.Type() != vfs.TypeDir {
		return fs.h.vm.VFS.Unlink(ctx, fs.caller, name)
	}
	if all {
		_, ents, err := fs.ReadDir(ctx, name)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := fs.Remove(ctx, path.Join(name, e.Name), true); err != nil {
				return err
			}
		}
	}
	return fs.h.vm.VFS.Rmdir(ctx, fs.caller, name)
}

// Rename renames oldname to newname, replacing newname.
func (fs *Files) Rename(ctx context.Context, oldname, newname string) error {
	ctx, err := fs.begin(ctx)
	if err != nil {
		return err
	}
	return fs.h.vm.VFS.Rename(ctx, fs.caller, oldname, newname)
}

// Symlink creates link as a symbolic link to target.
func (fs *Files) Symlink(ctx context.Context, target, link string) error {
	ctx, err := fs.begin(ctx)
	if err != nil {
		return err
	}
	return fs.h.vm.VFS.Symlink(ctx, fs.caller, target, link)
}

// Readlink returns the target of a symbolic link.
func (fs *Files) Readlink(ctx context.Context, name string) (string, error) {
	ctx, err := fs.begin(ctx)
	if err != nil {
		return "", err
	}
	return fs.h.vm.VFS.Readlink(ctx, fs.caller, name)
}

// Chmod sets the mode bits (permissions, setuid, setgid, sticky) of name.
func (fs *Files) Chmod(ctx context.Context, name string, mode uint32) error {
	ctx, err := fs.begin(ctx)
	if err != nil {
		return err
	}
	return fs.h.vm.VFS.SetAttr(ctx, fs.caller, name, true, vfs.SetAttr{Mask: vfs.SetMode, Mode: mode})
}
