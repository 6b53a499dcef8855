// Package softfs exposes a software store's commands as a read-only
// filesystem, meant to be a lower layer of every VM's root overlay.
//
// # Layout
//
//	/usr/bin/<command>   one regular file per command (mode 0755, owner
//	                     root), its data the command's WebAssembly module
//	/bin -> usr/bin      merged /usr, as Debian and Fedora have it, so
//	                     /bin/sh and /bin/bash exist and PATH finds every
//	                     command in either directory
//	<target>/...         each package's provides.files directories, at
//	                     their target paths
//
// The command table is read live from the store: a module registered
// with software.Store.Register after the filesystem was made appears in
// /usr/bin at once. Module bytes are never copied into memory by the
// filesystem: a read of /usr/bin/ls is a ReadAt on the package container
// on disk, so one 67 MB container serves every VM of the host process.
//
// # Identity of command files
//
// Command inodes implement [ContentIDer]: their content fingerprint is the
// sha256 the store recorded at install time, so a loader keys its compiled
// module cache without reading and hashing the file. Because the overlay
// above this layer hides the inode, [FS.CommandAt] also answers "is the
// file at this guest path our command?" from its attributes: command files
// carry the package's own timestamps, and a file a guest writes gets a
// change time (ctime) of "now" that no system call can set back, so a file
// whose attributes all equal the command's is the command.
package softfs

import (
	"context"
	"hash/fnv"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/software"
	"github.com/secexec/secexec/software/aospkg"
)

// BinDir is the guest directory holding one file per command.
const BinDir = "/usr/bin"

// ContentIDer is implemented by inodes whose content has a known sha256
// fingerprint.
type ContentIDer interface {
	ContentID() [32]byte
}

// Inode number ranges: static directories count up from 1, command files
// and package entries live in disjoint high ranges.
const (
	inoCommandBase = 1 << 48
	inoPackageBase = 1 << 52
)

// Source is what the filesystem needs of a software store;
// *software.Store implements it.
type Source interface {
	// Command looks up a command by name.
	Command(name string) (software.Command, bool)
	// Commands lists every command.
	Commands() []software.Command
	// Container returns an installed package's open container.
	Container(name string) (*aospkg.Package, bool)
	// Provides is what the installed packages contribute to every VM.
	Provides() software.Provides
}

// FS is the read-only software filesystem. It is safe for concurrent use
// by any number of VMs.
type FS struct {
	store Source
	root  *staticDir
	bin   *binDir

	// mtimes caches the container index time of (package, entry), so a
	// Stat of a command costs no index search.
	mtimes sync.Map // string -> time.Time
	// registered caches the bytes of modules added with Register, which
	// the store only hands out as copies.
	regMu      sync.Mutex
	registered map[software.Fingerprint][]byte
}

// New returns the filesystem for store. The provides.files directories of
// the packages installed at this moment are grafted at their targets;
// targets that would shadow /bin or /usr/bin are skipped.
func New(store Source) *FS {
	fs := &FS{store: store, registered: make(map[software.Fingerprint][]byte)}
	var nextIno uint64 = 1
	newDir := func() *staticDir {
		d := &staticDir{ino: nextIno, children: map[string]vfs.Inode{}}
		nextIno++
		return d
	}
	fs.root = newDir()
	usr := newDir()
	fs.bin = &binDir{fs: fs, ino: nextIno}
	nextIno++
	fs.root.add("usr", usr)
	fs.root.add("bin", &symlink{ino: nextIno, target: "usr/bin"})
	nextIno++
	usr.add("bin", fs.bin)

	for i, pf := range store.Provides().Files {
		pkg, ok := store.Container(pf.Package)
		if !ok {
			continue
		}
		e, ok := pkg.Lookup(pf.Source)
		if !ok || e.Kind != aospkg.KindDir {
			continue
		}
		target := path.Clean("/" + pf.Target)
		if !graftable(target) {
			continue
		}
		parts := strings.Split(target[1:], "/")
		d := fs.root
		ok = true
		for _, name := range parts[:len(parts)-1] {
			switch c := d.children[name].(type) {
			case nil:
				nd := newDir()
				d.add(name, nd)
				d = nd
			case *staticDir:
				d = c
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		last := parts[len(parts)-1]
		if !ok || d.children[last] != nil {
			continue
		}
		d.add(last, &pkgNode{pkg: pkg, entry: e, base: inoPackageBase + uint64(i)<<32})
	}
	return fs
}

// graftable reports whether a provides target may be mounted: not the root
// and not on the command directories.
func graftable(target string) bool {
	if target == "/" || target == "/usr" {
		return false
	}
	for _, p := range []string{"/bin", BinDir} {
		if target == p || strings.HasPrefix(target, p+"/") {
			return false
		}
	}
	return true
}

// Root returns the root directory.
func (fs *FS) Root(context.Context) (vfs.Inode, error) { return fs.root, nil }

// ReadOnly reports true: every mutation fails with EROFS.
func (fs *FS) ReadOnly() bool { return true }

// Release does nothing: the store owns the containers.
func (fs *FS) Release() error { return nil }

// Statfs reports the commands' total size, all of it used.
func (fs *FS) Statfs(context.Context) (vfs.Statfs, error) {
	cmds := fs.store.Commands()
	var size uint64
	for _, c := range cmds {
		size += uint64(c.Size)
	}
	blocks := (size + 4095) / 4096
	return vfs.Statfs{Type: 0x73717368, BlockSize: 4096, Blocks: blocks, Files: uint64(len(cmds)) + 3,
		NameMax: vfs.NameMax, ReadOnly: true}, nil
}

// CommandAt returns the command whose file is at the canonical guest path
// p (for example "/usr/bin/ls") and the attributes that file reports. A
// loader compares them with the attributes of the file it is asked to run
// to learn, without reading it, that it is this command.
func (fs *FS) CommandAt(p string) (software.Command, vfs.Stat, bool) {
	dir, name := path.Split(p)
	if dir != BinDir+"/" || name == "" {
		return software.Command{}, vfs.Stat{}, false
	}
	c, ok := fs.store.Command(name)
	if !ok {
		return software.Command{}, vfs.Stat{}, false
	}
	return c, fs.commandStat(c), true
}

// SameFile reports whether st, the attributes of a file as some view of
// the VM's filesystem reports them, are the attributes want of a command
// file. Inode and device numbers are ignored: the overlay renumbers both.
func SameFile(st, want vfs.Stat) bool {
	return st.Mode == want.Mode && st.Size == want.Size && st.UID == want.UID && st.GID == want.GID &&
		st.Mtime.Equal(want.Mtime) && st.Ctime.Equal(want.Ctime)
}

func (fs *FS) commandStat(c software.Command) vfs.Stat {
	t := fs.commandTime(c)
	return vfs.Stat{
		Ino:     commandIno(c.Name),
		Mode:    vfs.S_IFREG | 0o755,
		Nlink:   1,
		Size:    c.Size,
		Blksize: 4096,
		Blocks:  (c.Size + 511) / 512,
		Atime:   t,
		Mtime:   t,
		Ctime:   t,
	}
}

// commandTime is the container index time of a package command, and the
// epoch for registered modules.
func (fs *FS) commandTime(c software.Command) time.Time {
	if c.Package == "" || c.Entry == "" {
		return time.Unix(0, 0)
	}
	key := c.Package + "@" + c.Version + ":" + c.Entry
	if t, ok := fs.mtimes.Load(key); ok {
		return t.(time.Time)
	}
	t := time.Unix(0, 0)
	if pkg, ok := fs.store.Container(c.Package); ok {
		if e, ok := pkg.Lookup(c.Entry); ok && e.Mtime > 0 {
			t = time.Unix(e.Mtime, 0)
		}
	}
	fs.mtimes.Store(key, t)
	return t
}

func commandIno(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return inoCommandBase | h.Sum64()&(1<<47-1)
}

// cookieOf gives each command a directory cookie that does not depend on
// which other commands exist, so a listing resumes correctly while modules
// are registered: 48 bits of the name's hash, plus one so 0 stays "start".
// The overlay above keeps the top 8 bits of a cookie for itself.
func cookieOf(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()&(1<<48-1) + 1
}

// staticDir is a directory whose entries are fixed when the FS is made.
type staticDir struct {
	vfs.Unsupported
	ino      uint64
	names    []string
	children map[string]vfs.Inode
}

func (d *staticDir) add(name string, ino vfs.Inode) {
	d.children[name] = ino
	d.names = append(d.names, name)
	slices.Sort(d.names)
}

func (d *staticDir) FileType() vfs.FileType { return vfs.TypeDir }

func (d *staticDir) Stat(context.Context) (vfs.Stat, error) {
	n := uint32(2)
	for _, c := range d.children {
		if t, ok := c.(vfs.Typed); ok && t.FileType() == vfs.TypeDir {
			n++
		}
	}
	epoch := time.Unix(0, 0)
	return vfs.Stat{Ino: d.ino, Mode: vfs.S_IFDIR | 0o755, Nlink: n, Size: 4096, Blksize: 4096,
		Atime: epoch, Mtime: epoch, Ctime: epoch}, nil
}

func (d *staticDir) SetAttr(context.Context, vfs.SetAttr) error { return errno.EROFS }

func (d *staticDir) Lookup(_ context.Context, name string) (vfs.Inode, error) {
	if c, ok := d.children[name]; ok {
		return c, nil
	}
	return nil, errno.ENOENT
}

func (d *staticDir) ReadDir(ctx context.Context, cookie uint64, max int) ([]vfs.Dirent, error) {
	var out []vfs.Dirent
	for i := int(min(cookie, uint64(len(d.names)))); i < len(d.names) && len(out) < max; i++ {
		c := d.children[d.names[i]]
		st, err := c.Stat(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, vfs.Dirent{Name: d.names[i], Ino: st.Ino, Type: st.Type(), Next: uint64(i) + 1})
	}
	return out, nil
}

func (d *staticDir) Create(context.Context, string, vfs.CreateOptions) (vfs.Inode, error) {
	return nil, errno.EROFS
}
func (d *staticDir) Mkdir(context.Context, string, vfs.CreateOptions) (vfs.Inode, error) {
	return nil, errno.EROFS
}
func (d *staticDir) Symlink(context.Context, string, string, vfs.CreateOptions) (vfs.Inode, error) {
	return nil, errno.EROFS
}
func (d *staticDir) Link(context.Context, string, vfs.Inode) error           { return errno.EROFS }
func (d *staticDir) Unlink(context.Context, string) error                    { return errno.EROFS }
func (d *staticDir) Rmdir(context.Context, string) error                     { return errno.EROFS }
func (d *staticDir) Rename(context.Context, string, vfs.Inode, string) error { return errno.EROFS }
func (d *staticDir) Open(context.Context, vfs.OpenFlags) (vfs.Handle, error) {
	return nil, errno.EISDIR
}

// symlink is a fixed symbolic link.
type symlink struct {
	vfs.Unsupported
	ino    uint64
	target string
}

func (s *symlink) FileType() vfs.FileType { return vfs.TypeSymlink }

func (s *symlink) Stat(context.Context) (vfs.Stat, error) {
	epoch := time.Unix(0, 0)
	return vfs.Stat{Ino: s.ino, Mode: vfs.S_IFLNK | 0o777, Nlink: 1, Size: int64(len(s.target)),
		Blksize: 4096, Atime: epoch, Mtime: epoch, Ctime: epoch}, nil
}

func (s *symlink) SetAttr(context.Context, vfs.SetAttr) error { return errno.EROFS }

func (s *symlink) Readlink(context.Context) (string, error) { return s.target, nil }

// binDir is /usr/bin: one file per command of the store, listed live.
type binDir struct {
	staticDir
	fs  *FS
	ino uint64
}

func (d *binDir) Stat(context.Context) (vfs.Stat, error) {
	epoch := time.Unix(0, 0)
	return vfs.Stat{Ino: d.ino, Mode: vfs.S_IFDIR | 0o755, Nlink: 2, Size: 4096, Blksize: 4096,
		Atime: epoch, Mtime: epoch, Ctime: epoch}, nil
}

func (d *binDir) Lookup(_ context.Context, name string) (vfs.Inode, error) {
	if _, ok := d.fs.store.Command(name); !ok {
		return nil, errno.ENOENT
	}
	return &commandFile{fs: d.fs, name: name}, nil
}

func (d *binDir) ReadDir(_ context.Context, cookie uint64, max int) ([]vfs.Dirent, error) {
	cmds := d.fs.store.Commands()
	type ent struct {
		name   string
		cookie uint64
	}
	ents := make([]ent, 0, len(cmds))
	for _, c := range cmds {
		if k := cookieOf(c.Name); k > cookie {
			ents = append(ents, ent{c.Name, k})
		}
	}
	slices.SortFunc(ents, func(a, b ent) int {
		switch {
		case a.cookie < b.cookie:
			return -1
		case a.cookie > b.cookie:
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]vfs.Dirent, 0, min(max, len(ents)))
	for _, e := range ents {
		if len(out) == max {
			break
		}
		out = append(out, vfs.Dirent{Name: e.name, Ino: commandIno(e.name), Type: vfs.TypeRegular, Next: e.cookie})
	}
	return out, nil
}

// commandFile is /usr/bin/<name>. It holds only the name: attributes and
// data are read from the store on each call, so the file follows a module
// registered or replaced after the lookup.
type commandFile struct {
	vfs.Unsupported
	fs   *FS
	name string
}

func (f *commandFile) command() (software.Command, error) {
	c, ok := f.fs.store.Command(f.name)
	if !ok {
		return software.Command{}, errno.ENOENT
	}
	return c, nil
}

func (f *commandFile) FileType() vfs.FileType { return vfs.TypeRegular }

func (f *commandFile) Stat(context.Context) (vfs.Stat, error) {
	c, err := f.command()
	if err != nil {
		return vfs.Stat{}, err
	}
	return f.fs.commandStat(c), nil
}

func (f *commandFile) SetAttr(context.Context, vfs.SetAttr) error { return errno.EROFS }

// ContentID returns the sha256 of the module bytes.
func (f *commandFile) ContentID() [32]byte {
	c, err := f.command()
	if err != nil {
		return [32]byte{}
	}
	return c.Fingerprint
}

func (f *commandFile) Open(_ context.Context, flags vfs.OpenFlags) (vfs.Handle, error) {
	if flags.Writable() || flags&vfs.O_TRUNC != 0 {
		return nil, errno.EROFS
	}
	c, err := f.command()
	if err != nil {
		return nil, err
	}
	if mf, ok, err := c.OpenModuleFile(); ok {
		if err != nil {
			return nil, errno.EIO
		}
		return &readerHandle{r: mf, size: c.Size, closer: mf}, nil
	}
	if c.Package != "" {
		pkg, ok := f.fs.store.Container(c.Package)
		if !ok {
			return nil, errno.ENOENT
		}
		sr, err := pkg.Open(c.Entry)
		if err != nil {
			return nil, errno.EIO
		}
		return &readerHandle{r: sr, size: sr.Size()}, nil
	}
	b, err := f.fs.registeredBytes(c)
	if err != nil {
		return nil, err
	}
	return &bytesHandle{b: b}, nil
}

func (fs *FS) registeredBytes(c software.Command) ([]byte, error) {
	fs.regMu.Lock()
	defer fs.regMu.Unlock()
	if b, ok := fs.registered[c.Fingerprint]; ok {
		return b, nil
	}
	b, err := c.Module()
	if err != nil {
		return nil, errno.EIO
	}
	// Forget modules no longer registered under any name, so the cache
	// holds at most what the store holds.
	live := map[software.Fingerprint]bool{c.Fingerprint: true}
	for _, rc := range fs.store.Commands() {
		if rc.Package == "" {
			live[rc.Fingerprint] = true
		}
	}
	for fp := range fs.registered {
		if !live[fp] {
			delete(fs.registered, fp)
		}
	}
	fs.registered[c.Fingerprint] = b
	return b, nil
}
