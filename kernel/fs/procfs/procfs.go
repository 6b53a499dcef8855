// Package procfs is the /proc filesystem of a secexec VM. Every value it
// shows comes from the VM's own kernel through the Kernel interface: the
// VM's processes, hostname, uptime, memory limit and mount table. Nothing
// is read from the host, so a guest learns nothing about the machine it
// runs on (no host pids, hostname, environment, paths, memory, CPU model,
// kernel version or uptime).
//
// The layout follows Linux's: /proc/self, /proc/<pid>/{cmdline, comm, cwd,
// environ, exe, fd/, fdinfo/, limits, mounts, root, stat, statm, status}, and the global
// cpuinfo, loadavg, meminfo, mounts, stat, uptime, version and
// sys/kernel/{domainname, hostname, osrelease, ostype, version}. Files are
// generated when opened and the snapshot is kept in the handle, so reads
// at any offset see one consistent text, as Linux's seq_files give a reader
// that reads in one go. Everything is read-only: opening for writing fails
// with EACCES, creating or removing entries with EPERM.
package procfs

import (
	"context"
	"time"

	"github.com/secexec/secexec/kernel/vfs"
)

// Kernel is what procfs needs from the VM's kernel. Every method must be
// safe for concurrent use and cheap: procfs calls them on each lookup.
type Kernel interface {
	// CallerPID returns the pid of the process making the call that ctx
	// belongs to, or false when the call comes from the host side of the
	// VM rather than from a guest process.
	CallerPID(ctx context.Context) (pid int, ok bool)
	// PIDs returns the pids of the live processes (zombies included), in
	// any order. procfs does not modify the slice.
	PIDs() []int
	// Process returns the process with the pid, or false if there is none.
	// The values must be comparable (pointers, typically) and stay the
	// same for the life of the process: procfs compares them to tell a
	// process from a later one that reused its pid.
	Process(pid int) (Process, bool)
	// Hostname is the VM's host name.
	Hostname() string
	// Uptime is how long the VM has been running.
	Uptime() time.Duration
	// Boot is when the VM started, on the VM's clock.
	Boot() time.Time
	// MemInfo returns the VM's memory limit and how much of it is free, in
	// bytes. These are the VM's numbers, never the host's.
	MemInfo() (total, free uint64)
	// Mounts returns the VM's mount table in mount order.
	Mounts() []MountInfo
	// Limits returns the resource limits every process of the VM runs
	// under, for /proc/<pid>/limits.
	Limits() Limits
}

// Limits are the per-process resource limits of a VM, as
// /proc/<pid>/limits shows them (soft and hard alike: a guest cannot
// raise or lower them). Zero means unlimited.
type Limits struct {
	// CPUTime is RLIMIT_CPU: the CPU time after which a process gets
	// SIGXCPU.
	CPUTime time.Duration
	// Memory is RLIMIT_DATA and RLIMIT_AS: one process's memory (a
	// WebAssembly instance's linear memory, an isolate's heap), in bytes.
	Memory uint64
	// Processes is RLIMIT_NPROC: the VM's processes, zombies included.
	Processes uint64
	// OpenFiles is RLIMIT_NOFILE: one process's descriptors.
	OpenFiles uint64
}

// Process is one process of the VM, as procfs sees it.
type Process interface {
	// Cmdline returns the argument vector. procfs keeps the slice, without
	// copying it, while a reader has /proc/<pid>/cmdline open, so the
	// kernel must never modify a slice it has handed out.
	Cmdline() []string
	// Environ returns the environment as "KEY=value" strings, with the
	// same ownership rule as Cmdline.
	Environ() []string
	// Cwd returns the absolute guest path of the working directory.
	Cwd() string
	// Exe returns the absolute guest path of the executable, or "" if
	// there is none (a zombie).
	Exe() string
	// Status returns the process's state and credentials.
	Status() Status
	// FDs returns the open file descriptors, in any order. procfs does
	// not modify the slice.
	FDs() []int
	// FD returns the open file at fd without adding a reference; the file
	// is used only for the duration of the call that asked for it.
	FD(fd int) (vfs.File, bool)
}

// Status is a snapshot of a process's state.
type Status struct {
	// Name is the command name (Linux's comm), typically the base name of
	// the executable. procfs truncates it to 15 bytes as Linux does.
	Name string
	// State is Linux's one-letter state: 'R' running, 'S' sleeping, 'D'
	// disk sleep, 'T' stopped, 'Z' zombie, 'X' dead, 'I' idle. Any other
	// value is shown as 'S'.
	State byte
	PID   int
	PPID  int
	PGID  int
	SID   int
	UID   uint32
	GID   uint32
	// Umask is the file mode creation mask.
	Umask uint32
	// Threads is the number of threads; 0 is shown as 1.
	Threads int
	// VmSize and VmRSS are the virtual and resident memory, in bytes.
	VmSize uint64
	VmRSS  uint64
	// TTY is the controlling terminal's device number in Linux's
	// encoding (major<<8 | minor&0xff | (minor&^0xff)<<12), 0 for none.
	TTY int
	// TPGID is the foreground process group of the controlling
	// terminal, 0 for none (stat shows -1, as Linux does).
	TPGID int
	// StartTime is when the process started, measured from the VM's boot.
	StartTime time.Duration
	// UserTime and SysTime are the CPU time consumed.
	UserTime time.Duration
	SysTime  time.Duration
}

// MountInfo is one entry of the mount table, as /proc/mounts shows it.
type MountInfo struct {
	// Source is the device column, e.g. "tmpfs", "proc" or "none".
	Source string
	// Target is the absolute guest path of the mount point.
	Target string
	// FSType is the filesystem type, e.g. "tmpfs", "proc", "devtmpfs".
	FSType string
	// Options is the comma-separated option list, e.g. "rw" or "ro,nosuid".
	Options string
}

// Fixed identity of the VM's kernel, which uname(2) should agree with.
const (
	OSType    = "Linux"
	OSRelease = "6.1.0-secexec"
	OSVersion = "#1 SMP secexec"
)

// procSuperMagic is what statfs(2) reports for a Linux procfs.
const procSuperMagic = 0x9fa0

// FS is a procfs instance for one VM. It holds no state of its own beyond
// the Kernel: every answer is computed from it, so it is safe for
// concurrent use whenever the Kernel is.
type FS struct {
	k Kernel
}

// New returns a procfs showing k's processes.
func New(k Kernel) *FS { return &FS{k: k} }

// Root returns the /proc directory.
func (fs *FS) Root(context.Context) (vfs.Inode, error) {
	return node{fs: fs, kind: kRoot}, nil
}

// Statfs reports an empty filesystem, as Linux's procfs does.
func (fs *FS) Statfs(context.Context) (vfs.Statfs, error) {
	return vfs.Statfs{Type: procSuperMagic, BlockSize: 4096, NameMax: vfs.NameMax}, nil
}

// ReadOnly reports false: like Linux's /proc, the mount is not read-only;
// its entries refuse changes one by one (EACCES, EPERM).
func (fs *FS) ReadOnly() bool { return false }

// Release does nothing; a procfs holds no resources.
func (fs *FS) Release() error { return nil }
