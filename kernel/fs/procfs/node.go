package procfs

import (
	"context"
	"slices"
	"strconv"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// kind names an entry of the /proc tree. The tree's shape is fixed; only
// the set of pids and of each process's fds varies.
type kind uint8

const (
	kRoot kind = iota
	// Entries of /proc itself.
	kCPUInfo
	kLoadavg
	kMeminfo
	kMounts
	kSelf
	kStat
	kSys
	kUptime
	kVersion
	// /proc/sys and below.
	kSysKernel
	kDomainname
	kHostname
	kOSRelease
	kOSType
	kKernelVersion
	// /proc/<pid> and below. Every kind from kPid on belongs to a process.
	kPid
	kCmdline
	kComm
	kCwd
	kEnviron
	kExe
	kFdDir
	kPidMounts
	kPidRoot
	kPidStat
	kStatm
	kStatus
	kLimits
	kFd
	kFdinfoDir
	kFdinfo
	numKinds
)

// spec is the fixed description of a kind.
type spec struct {
	name string
	typ  vfs.FileType
	perm uint32
}

var specs = [numKinds]spec{
	kRoot:          {"", vfs.TypeDir, 0o555},
	kCPUInfo:       {"cpuinfo", vfs.TypeRegular, 0o444},
	kLoadavg:       {"loadavg", vfs.TypeRegular, 0o444},
	kMeminfo:       {"meminfo", vfs.TypeRegular, 0o444},
	kMounts:        {"mounts", vfs.TypeRegular, 0o444},
	kSelf:          {"self", vfs.TypeSymlink, 0o777},
	kStat:          {"stat", vfs.TypeRegular, 0o444},
	kSys:           {"sys", vfs.TypeDir, 0o555},
	kUptime:        {"uptime", vfs.TypeRegular, 0o444},
	kVersion:       {"version", vfs.TypeRegular, 0o444},
	kSysKernel:     {"kernel", vfs.TypeDir, 0o555},
	kDomainname:    {"domainname", vfs.TypeRegular, 0o444},
	kHostname:      {"hostname", vfs.TypeRegular, 0o444},
	kOSRelease:     {"osrelease", vfs.TypeRegular, 0o444},
	kOSType:        {"ostype", vfs.TypeRegular, 0o444},
	kKernelVersion: {"version", vfs.TypeRegular, 0o444},
	kPid:           {"", vfs.TypeDir, 0o555},
	kCmdline:       {"cmdline", vfs.TypeRegular, 0o444},
	kComm:          {"comm", vfs.TypeRegular, 0o444},
	kCwd:           {"cwd", vfs.TypeSymlink, 0o777},
	kEnviron:       {"environ", vfs.TypeRegular, 0o400},
	kExe:           {"exe", vfs.TypeSymlink, 0o777},
	kFdDir:         {"fd", vfs.TypeDir, 0o500},
	kPidMounts:     {"mounts", vfs.TypeRegular, 0o444},
	kPidRoot:       {"root", vfs.TypeSymlink, 0o777},
	kPidStat:       {"stat", vfs.TypeRegular, 0o444},
	kStatm:         {"statm", vfs.TypeRegular, 0o444},
	kStatus:        {"status", vfs.TypeRegular, 0o444},
	kLimits:        {"limits", vfs.TypeRegular, 0o444},
	kFd:            {"", vfs.TypeSymlink, 0o700},
	kFdinfoDir:     {"fdinfo", vfs.TypeDir, 0o500},
	kFdinfo:        {"", vfs.TypeRegular, 0o400},
}

// children lists the fixed entries of each directory kind, sorted by name
// so that ReadDir output is ordered the way ls shows it.
var children = map[kind][]kind{
	kRoot:      {kCPUInfo, kLoadavg, kMeminfo, kMounts, kSelf, kStat, kSys, kUptime, kVersion},
	kSys:       {kSysKernel},
	kSysKernel: {kDomainname, kHostname, kOSRelease, kOSType, kKernelVersion},
	kPid:       {kCmdline, kComm, kCwd, kEnviron, kExe, kFdDir, kFdinfoDir, kLimits, kPidMounts, kPidRoot, kPidStat, kStatm, kStatus},
}

// node is every inode of procfs. It is a small comparable value, so two
// lookups of one entry yield equal Inodes, and it holds no state: each
// method asks the Kernel afresh. For per-process kinds, proc is the process
// the pid named at lookup; if the pid has since exited (or been reused)
// every method fails with ENOENT, as Linux's do.
type node struct {
	fs   *FS
	kind kind
	pid  int
	proc Process
	fd   int
}

var (
	_ vfs.Inode     = node{}
	_ vfs.Typed     = node{}
	_ vfs.MagicLink = node{}
)

// perProcess reports whether n belongs to a process.
func (n node) perProcess() bool { return n.kind >= kPid }

// live fails with ENOENT when n's process is gone.
func (n node) live() error {
	if !n.perProcess() {
		return nil
	}
	p, ok := n.fs.k.Process(n.pid)
	if !ok || p != n.proc {
		return errno.ENOENT
	}
	return nil
}

// mayInspect applies Linux's ptrace-read rule, reduced to credentials: the
// caller may see another process's links, fds and environment if it is
// root or has the same uid. Calls without a calling process are refused:
// the host side has the kernel's own interfaces and no need for these.
func (n node) mayInspect(ctx context.Context) error {
	pid, ok := n.fs.k.CallerPID(ctx)
	if !ok {
		return errno.EACCES
	}
	caller, ok := n.fs.k.Process(pid)
	if !ok {
		return errno.EACCES
	}
	if uid := caller.Status().UID; uid == 0 || uid == n.proc.Status().UID {
		return nil
	}
	return errno.EACCES
}

// ino numbers the inodes: global entries by kind, per-process ones by pid,
// kind and fd, so the numbers never collide while pids stay below 2^31.
func (n node) ino() uint64 {
	if !n.perProcess() {
		return uint64(n.kind) + 1
	}
	return uint64(n.pid)<<32 | uint64(n.kind)<<24 | uint64(n.fd)&0xffffff
}

// FileType reports the type, which is fixed by the kind.
func (n node) FileType() vfs.FileType { return specs[n.kind].typ }

// Stat returns the attributes. Per-process entries are owned by the
// process's uid and gid, carry its start time, and vanish with it.
func (n node) Stat(ctx context.Context) (vfs.Stat, error) {
	if err := n.live(); err != nil {
		return vfs.Stat{}, err
	}
	sp := specs[n.kind]
	boot := n.fs.k.Boot()
	st := vfs.Stat{
		Ino:     n.ino(),
		Mode:    uint32(sp.typ) | sp.perm,
		Nlink:   1,
		Blksize: 1024,
		Atime:   boot,
		Mtime:   boot,
		Ctime:   boot,
	}
	if sp.typ == vfs.TypeDir {
		st.Nlink = 2
		for _, c := range children[n.kind] {
			if specs[c].typ == vfs.TypeDir {
				st.Nlink++
			}
		}
		if n.kind == kRoot {
			st.Nlink += uint32(len(n.fs.k.PIDs()))
		}
	}
	if n.perProcess() {
		s := n.proc.Status()
		st.UID, st.GID = s.UID, s.GID
		t := boot.Add(s.StartTime)
		st.Atime, st.Mtime, st.Ctime = t, t, t
	}
	if n.kind == kFd {
		f, ok := n.proc.FD(n.fd)
		if !ok {
			return vfs.Stat{}, errno.ENOENT
		}
		// The permission bits say how the fd was opened, as on Linux.
		st.Mode = vfs.S_IFLNK
		if fl := f.Flags(); fl&vfs.O_PATH == 0 {
			if fl.Readable() {
				st.Mode |= 0o500
			}
			if fl.Writable() {
				st.Mode |= 0o300
			}
		}
		st.Size = 64
	}
	return st, nil
}

// SetAttr fails with EPERM: nothing in /proc can be changed.
func (n node) SetAttr(context.Context, vfs.SetAttr) error {
	if err := n.live(); err != nil {
		return err
	}
	return errno.EPERM
}

// Lookup finds name in a directory.
func (n node) Lookup(ctx context.Context, name string) (vfs.Inode, error) {
	if n.FileType() != vfs.TypeDir {
		return nil, errno.ENOTDIR
	}
	if err := n.live(); err != nil {
		return nil, err
	}
	for _, c := range children[n.kind] {
		if specs[c].name == name {
			if c == kSelf {
				return selfLink{fs: n.fs}, nil
			}
			return node{fs: n.fs, kind: c, pid: n.pid, proc: n.proc}, nil
		}
	}
	switch n.kind {
	case kRoot:
		pid, ok := parseNum(name)
		if !ok {
			return nil, errno.ENOENT
		}
		p, ok := n.fs.k.Process(pid)
		if !ok {
			return nil, errno.ENOENT
		}
		return node{fs: n.fs, kind: kPid, pid: pid, proc: p}, nil
	case kFdDir, kFdinfoDir:
		if err := n.mayInspect(ctx); err != nil {
			return nil, err
		}
		fd, ok := parseNum(name)
		if !ok {
			return nil, errno.ENOENT
		}
		if _, ok := n.proc.FD(fd); !ok {
			return nil, errno.ENOENT
		}
		k := kFd
		if n.kind == kFdinfoDir {
			k = kFdinfo
		}
		return node{fs: n.fs, kind: k, pid: n.pid, proc: n.proc, fd: fd}, nil
	}
	return nil, errno.ENOENT
}

// ReadDir lists a directory. The fixed entries come first, with cookies
// 1..len; then, in /proc, the pids in ascending order with cookie
// len+1+pid, and in fd/ the fds with cookie fd+1. Because a cookie encodes
// the pid or fd itself, processes starting and exiting during a listing
// never make a live one appear twice or go missing.
func (n node) ReadDir(ctx context.Context, cookie uint64, max int) ([]vfs.Dirent, error) {
	if n.FileType() != vfs.TypeDir {
		return nil, errno.ENOTDIR
	}
	if err := n.live(); err != nil {
		return nil, err
	}
	if max <= 0 {
		return nil, errno.EINVAL
	}
	var out []vfs.Dirent
	fixed := children[n.kind]
	for i := cookie; i < uint64(len(fixed)) && len(out) < max; i++ {
		c := node{fs: n.fs, kind: fixed[i], pid: n.pid, proc: n.proc}
		out = append(out, vfs.Dirent{Name: specs[c.kind].name, Ino: c.ino(), Type: specs[c.kind].typ, Next: i + 1})
	}
	var nums []int
	var typ vfs.FileType
	var mk func(num int) node
	base := uint64(len(fixed)) + 1
	switch n.kind {
	case kRoot:
		nums, typ = n.fs.k.PIDs(), vfs.TypeDir
		mk = func(pid int) node { return node{kind: kPid, pid: pid} }
	case kFdDir:
		if err := n.mayInspect(ctx); err != nil {
			return nil, err
		}
		nums, typ, base = n.proc.FDs(), vfs.TypeSymlink, 1
		mk = func(fd int) node { return node{kind: kFd, pid: n.pid, fd: fd} }
	case kFdinfoDir:
		if err := n.mayInspect(ctx); err != nil {
			return nil, err
		}
		nums, typ, base = n.proc.FDs(), vfs.TypeRegular, 1
		mk = func(fd int) node { return node{kind: kFdinfo, pid: n.pid, fd: fd} }
	default:
		return out, nil
	}
	nums = slices.Clone(nums)
	slices.Sort(nums)
	for _, num := range nums {
		if len(out) >= max {
			break
		}
		if num < 0 || uint64(num)+base <= cookie {
			continue
		}
		out = append(out, vfs.Dirent{Name: strconv.Itoa(num), Ino: mk(num).ino(), Type: typ, Next: uint64(num) + base})
	}
	return out, nil
}

// Readlink returns a link's target for the caller: the process's cwd,
// executable or root, or the path of the file at an fd ("/tmp/x",
// "pipe:[12]").
func (n node) Readlink(ctx context.Context) (string, error) {
	if n.FileType() != vfs.TypeSymlink {
		return "", errno.EINVAL
	}
	if err := n.live(); err != nil {
		return "", err
	}
	if err := n.mayInspect(ctx); err != nil {
		return "", err
	}
	var target string
	switch n.kind {
	case kCwd:
		target = n.proc.Cwd()
	case kExe:
		target = n.proc.Exe()
	case kPidRoot:
		target = "/"
	case kFd:
		f, ok := n.proc.FD(n.fd)
		if !ok {
			return "", errno.ENOENT
		}
		target = f.Path()
	}
	if target == "" {
		return "", errno.ENOENT
	}
	return target, nil
}

// Resolve is what following a per-process link designates: a path to walk
// on from, or, for an fd whose file has no path (a pipe), the open file
// itself, which opening the link then shares.
func (n node) Resolve(ctx context.Context) (string, vfs.File, error) {
	if n.kind != kFd {
		target, err := n.Readlink(ctx)
		if err != nil {
			return "", nil, err
		}
		if target[0] != '/' {
			return "", nil, errno.ENOENT
		}
		return target, nil, nil
	}
	if err := n.live(); err != nil {
		return "", nil, err
	}
	if err := n.mayInspect(ctx); err != nil {
		return "", nil, err
	}
	f, ok := n.proc.FD(n.fd)
	if !ok {
		return "", nil, errno.ENOENT
	}
	if p := f.Path(); len(p) > 0 && p[0] == '/' {
		return p, nil, nil
	}
	return "", f, nil
}

// Open snapshots a file's content into a handle. Opening for writing fails
// with EACCES, as for a Linux proc file without a write method.
func (n node) Open(ctx context.Context, flags vfs.OpenFlags) (vfs.Handle, error) {
	switch n.FileType() {
	case vfs.TypeDir:
		return nil, errno.EISDIR
	case vfs.TypeRegular:
	default:
		return nil, errno.ENXIO
	}
	if flags.Writable() || flags&vfs.O_TRUNC != 0 {
		return nil, errno.EACCES
	}
	if err := n.live(); err != nil {
		return nil, err
	}
	switch n.kind {
	case kCmdline:
		return newStringsHandle(n.proc.Cmdline()), nil
	case kEnviron:
		if err := n.mayInspect(ctx); err != nil {
			return nil, err
		}
		return newStringsHandle(n.proc.Environ()), nil
	case kFdinfo:
		if err := n.mayInspect(ctx); err != nil {
			return nil, err
		}
		f, ok := n.proc.FD(n.fd)
		if !ok {
			return nil, errno.ENOENT
		}
		return &bytesHandle{data: renderFdinfo(ctx, f)}, nil
	}
	return &bytesHandle{data: n.fs.generate(n)}, nil
}

// dirHas reports whether a directory has name, for the errno choice of
// the refused mutations below.
func (n node) dirHas(ctx context.Context, name string) (bool, error) {
	if n.FileType() != vfs.TypeDir {
		return false, errno.ENOTDIR
	}
	if err := n.live(); err != nil {
		return false, err
	}
	_, err := n.Lookup(ctx, name)
	if err == nil {
		return true, nil
	}
	if errno.Of(err) == errno.ENOENT {
		return false, nil
	}
	return false, err
}

// refuseNew answers a request to add name: EEXIST if it is taken, EPERM
// otherwise (Linux's answer for a directory without the operation).
func (n node) refuseNew(ctx context.Context, name string) error {
	has, err := n.dirHas(ctx, name)
	switch {
	case err != nil:
		return err
	case has:
		return errno.EEXIST
	}
	return errno.EPERM
}

// refuseChange answers a request to remove or move name.
func (n node) refuseChange(ctx context.Context, name string) error {
	has, err := n.dirHas(ctx, name)
	switch {
	case err != nil:
		return err
	case !has:
		return errno.ENOENT
	}
	return errno.EPERM
}

// Create fails: /proc's entries are made by the kernel.
func (n node) Create(ctx context.Context, name string, _ vfs.CreateOptions) (vfs.Inode, error) {
	return nil, n.refuseNew(ctx, name)
}

// Mkdir fails: /proc's entries are made by the kernel.
func (n node) Mkdir(ctx context.Context, name string, _ vfs.CreateOptions) (vfs.Inode, error) {
	return nil, n.refuseNew(ctx, name)
}

// Symlink fails: /proc's entries are made by the kernel.
func (n node) Symlink(ctx context.Context, name, _ string, _ vfs.CreateOptions) (vfs.Inode, error) {
	return nil, n.refuseNew(ctx, name)
}

// Link fails: /proc's entries are made by the kernel.
func (n node) Link(ctx context.Context, name string, _ vfs.Inode) error {
	return n.refuseNew(ctx, name)
}

// Unlink fails: /proc's entries are removed by the kernel.
func (n node) Unlink(ctx context.Context, name string) error { return n.refuseChange(ctx, name) }

// Rmdir fails: /proc's entries are removed by the kernel.
func (n node) Rmdir(ctx context.Context, name string) error { return n.refuseChange(ctx, name) }

// Rename fails: /proc's entries are fixed.
func (n node) Rename(ctx context.Context, oldName string, _ vfs.Inode, _ string) error {
	return n.refuseChange(ctx, oldName)
}

// selfLink is /proc/self. Like Linux's, it is an ordinary symlink whose
// target depends on the reader: the caller's pid, relative, so it resolves
// to /proc/<pid> wherever procfs is mounted.
type selfLink struct {
	vfs.Unsupported
	fs *FS
}

var _ vfs.Typed = selfLink{}

// FileType reports a symlink.
func (s selfLink) FileType() vfs.FileType { return vfs.TypeSymlink }

// Stat returns the attributes.
func (s selfLink) Stat(context.Context) (vfs.Stat, error) {
	boot := s.fs.k.Boot()
	return vfs.Stat{
		Ino:     node{kind: kSelf}.ino(),
		Mode:    vfs.S_IFLNK | 0o777,
		Nlink:   1,
		Blksize: 1024,
		Atime:   boot,
		Mtime:   boot,
		Ctime:   boot,
	}, nil
}

// Readlink returns the caller's pid, or ENOENT for a call that no guest
// process made.
func (s selfLink) Readlink(ctx context.Context) (string, error) {
	pid, ok := s.fs.k.CallerPID(ctx)
	if !ok {
		return "", errno.ENOENT
	}
	return strconv.Itoa(pid), nil
}

// parseNum parses a pid or fd name as Linux's name_to_int does: decimal
// digits only, no sign, no leading zero (except "0" itself), and a value
// that fits in a pid_t. Anything else is not a number, so "01" and "+1"
// name nothing.
func parseNum(s string) (int, bool) {
	if s == "" || len(s) > 10 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if n > 1<<31-1 {
		return 0, false
	}
	return n, true
}
