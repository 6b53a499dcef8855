package procfs

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/kernel/waiter"
)

// fakeKernel is a minimal process table for tests: the real kernel
// implements Kernel later.
type fakeKernel struct {
	mu       sync.Mutex
	procs    map[int]*fakeProc
	hostname string
	uptime   time.Duration
	boot     time.Time
	total    uint64
	free     uint64
	mounts   []MountInfo
	limits   Limits
}

type callerKey struct{}

// as returns a context whose calls are made by pid.
func as(pid int) context.Context {
	return context.WithValue(context.Background(), callerKey{}, pid)
}

func (k *fakeKernel) CallerPID(ctx context.Context) (int, bool) {
	pid, ok := ctx.Value(callerKey{}).(int)
	return pid, ok
}

func (k *fakeKernel) PIDs() []int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Collect(maps.Keys(k.procs))
}

func (k *fakeKernel) Process(pid int) (Process, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p, ok := k.procs[pid]
	if !ok {
		return nil, false
	}
	return p, true
}

func (k *fakeKernel) add(p *fakeProc) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.procs[p.status.PID] = p
}

func (k *fakeKernel) remove(pid int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.procs, pid)
}

func (k *fakeKernel) Hostname() string              { return k.hostname }
func (k *fakeKernel) Uptime() time.Duration         { return k.uptime }
func (k *fakeKernel) Boot() time.Time               { return k.boot }
func (k *fakeKernel) MemInfo() (total, free uint64) { return k.total, k.free }
func (k *fakeKernel) Mounts() []MountInfo           { return k.mounts }
func (k *fakeKernel) Limits() Limits                { return k.limits }

type fakeProc struct {
	mu      sync.Mutex
	cmdline []string
	environ []string
	cwd     string
	exe     string
	status  Status
	fds     map[int]vfs.File
}

func (p *fakeProc) Cmdline() []string { return p.cmdline }
func (p *fakeProc) Environ() []string { return p.environ }
func (p *fakeProc) Cwd() string       { return p.cwd }
func (p *fakeProc) Exe() string       { return p.exe }

func (p *fakeProc) Status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

func (p *fakeProc) setState(s byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status.State = s
}

func (p *fakeProc) FDs() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Collect(maps.Keys(p.fds))
}

func (p *fakeProc) FD(fd int) (vfs.File, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, ok := p.fds[fd]
	return f, ok
}

func (p *fakeProc) setFD(fd int, f vfs.File) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f == nil {
		delete(p.fds, fd)
		return
	}
	p.fds[fd] = f
}

// pathless is an open file without a path, standing in for a pipe end:
// the real pipe package serves its ends through the kernel, not as Files.
type pathless struct {
	vfs.Refs
	vfs.StreamDefaults
	name  string
	flags vfs.OpenFlags
}

func newPathless(name string, flags vfs.OpenFlags) *pathless {
	f := &pathless{name: name, flags: flags}
	f.InitRefs(nil)
	return f
}

func (f *pathless) Readiness(m waiter.EventMask) waiter.EventMask  { return 0 }
func (f *pathless) EventRegister(*waiter.Entry)                    {}
func (f *pathless) EventUnregister(*waiter.Entry)                  {}
func (f *pathless) Read(context.Context, []byte) (int, error)      { return 0, nil }
func (f *pathless) Write(_ context.Context, p []byte) (int, error) { return len(p), nil }
func (f *pathless) Stat(context.Context) (vfs.Stat, error) {
	return vfs.Stat{Mode: vfs.S_IFIFO | 0o600}, nil
}
func (f *pathless) SetAttr(context.Context, vfs.SetAttr) error { return errno.EPERM }
func (f *pathless) Flags() vfs.OpenFlags                       { return f.flags }
func (f *pathless) SetFlags(vfs.OpenFlags) error               { return nil }
func (f *pathless) Path() string                               { return f.name }

var boot = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// newFake returns a kernel with init (pid 1, root) and a shell (pid 42,
// uid 1000) whose fds 0-2 are a pipe, a file and a pipe.
func newFake() *fakeKernel {
	k := &fakeKernel{
		procs:    map[int]*fakeProc{},
		hostname: "guestbox",
		uptime:   754*time.Second + 250*time.Millisecond,
		boot:     boot,
		total:    256 << 20,
		free:     192 << 20,
		mounts: []MountInfo{
			{Source: "rootfs", Target: "/", FSType: "tmpfs", Options: "rw"},
			{Source: "proc", Target: "/proc", FSType: "proc", Options: "rw,nosuid"},
			{Source: "devtmpfs", Target: "/dev", FSType: "devtmpfs", Options: "rw"},
		},
	}
	k.add(&fakeProc{
		cmdline: []string{"/sbin/init"},
		environ: []string{"HOME=/", "TERM=dumb"},
		cwd:     "/",
		exe:     "/sbin/init",
		status:  Status{Name: "init", State: 'S', PID: 1, PGID: 1, SID: 1, Umask: 0o022, VmSize: 8 << 20, VmRSS: 2 << 20, Threads: 1},
		fds:     map[int]vfs.File{},
	})
	k.add(&fakeProc{
		cmdline: []string{"sh", "-c", "echo hi", ""},
		environ: []string{"HOME=/home/guest", "PATH=/usr/bin:/bin", "X=a b"},
		cwd:     "/home/guest",
		exe:     "/bin/sh",
		status: Status{Name: "sh", State: 'R', PID: 42, PPID: 1, PGID: 42, SID: 1, UID: 1000, GID: 100,
			Umask: 0o027, VmSize: 16 << 20, VmRSS: 3 << 20, StartTime: 1500 * time.Millisecond,
			UserTime: 250 * time.Millisecond, SysTime: 40 * time.Millisecond},
		fds: map[int]vfs.File{
			0: newPathless("pipe:[3]", vfs.O_RDONLY),
			1: newPathless("/home/guest/out.txt", vfs.O_WRONLY),
			2: newPathless("pipe:[4]", vfs.O_RDWR),
		},
	})
	return k
}
