package kernel

import (
	"context"
	"path"
	"time"

	"github.com/secexec/secexec/kernel/fs/procfs"
	"github.com/secexec/secexec/kernel/vfs"
)

type procKey struct{}

// ProcessFromContext returns the process a context belongs to: every
// process context carries its process, so layers below the kernel (procfs
// answering /proc/self) can tell who is calling.
func ProcessFromContext(ctx context.Context) (*Process, bool) {
	p, ok := ctx.Value(procKey{}).(*Process)
	return p, ok
}

// ProcFS returns a /proc filesystem showing this kernel's processes.
// memTotal is the memory figure /proc/meminfo reports.
func (k *Kernel) ProcFS(memTotal uint64) *procfs.FS {
	return procfs.New(procView{k: k, mem: memTotal})
}

// procView adapts the kernel to procfs.Kernel.
type procView struct {
	k   *Kernel
	mem uint64
}

func (v procView) CallerPID(ctx context.Context) (int, bool) {
	p, ok := ProcessFromContext(ctx)
	if !ok || p.k != v.k {
		return 0, false
	}
	return p.pid, true
}

func (v procView) PIDs() []int { return v.k.PIDs() }

func (v procView) Process(pid int) (procfs.Process, bool) {
	p, ok := v.k.Process(pid)
	if !ok {
		return nil, false
	}
	return procEntry{p}, true
}

func (v procView) Hostname() string              { return v.k.hostname }
func (v procView) Uptime() time.Duration         { return v.k.clock.Elapsed() }
func (v procView) Boot() time.Time               { return v.k.clock.Boot() }
func (v procView) MemInfo() (total, free uint64) { return v.mem, v.mem }

func (v procView) Limits() procfs.Limits {
	l := v.k.limits
	mem := l.MemoryBytes
	if mem <= 0 {
		mem = DefaultProcessMemoryBytes
	}
	return procfs.Limits{
		CPUTime:   l.CPUTime,
		Memory:    uint64(mem),
		Processes: uint64(max(l.Processes, 0)),
		OpenFiles: uint64(max(l.FDsPerProcess, 0)),
	}
}

func (v procView) Mounts() []procfs.MountInfo {
	ms := v.k.vfs.Mounts()
	out := make([]procfs.MountInfo, 0, len(ms))
	for _, m := range ms {
		opts := "rw"
		if m.ReadOnly {
			opts = "ro"
		}
		typ := "tmpfs"
		switch m.Path {
		case "/":
			typ = "overlay"
		case "/proc":
			typ = "proc"
		case "/dev":
			typ = "devtmpfs"
		}
		out = append(out, procfs.MountInfo{Source: typ, Target: m.Path, FSType: typ, Options: opts})
	}
	return out
}

// ptsDevice is /dev/pts/N's device number as Linux encodes it in
// /proc/<pid>/stat's tty_nr (new_encode_dev): major 136, minor N.
func ptsDevice(n int) int {
	const major = 136
	return n&0xff | major<<8 | (n&^0xff)<<12
}

// procEntry is a pointer wrapper, so procfs can compare entries.
type procEntry struct{ p *Process }

func (e procEntry) Cmdline() []string { return e.p.Argv() }
func (e procEntry) Environ() []string { return e.p.Environ() }
func (e procEntry) Cwd() string       { return e.p.Cwd() }
func (e procEntry) Exe() string       { return e.p.Exe() }

func (e procEntry) Status() procfs.Status {
	p := e.p
	k := p.k
	k.mu.Lock()
	st := procfs.Status{State: byte(p.state), PID: p.pid, PGID: p.pgid, SID: p.sid, UID: p.uid, GID: p.gid}
	if p.parent != nil {
		st.PPID = p.parent.pid
	}
	if t := p.ctty; t != nil {
		st.TTY = ptsDevice(t.index)
		st.TPGID = t.fgrp
	}
	k.mu.Unlock()
	// The memory its runtime reported (a WebAssembly instance's linear
	// memory, an isolate's heap) is both its size and what it holds.
	mem := uint64(max(p.mem.Load(), 0))
	st.VmSize, st.VmRSS = mem, mem
	if st.State == byte(StateNew) {
		st.State = 'R'
	}
	if st.State == byte(StateRunning) {
		st.State = 'S'
	}
	img := p.image.Load()
	name := img.exe
	if name == "" && len(img.argv) > 0 {
		name = img.argv[0]
	}
	st.Name = path.Base(name)
	st.Umask = p.Umask()
	st.Threads = 1
	// Times are shown under the VM's clock policy, like every other.
	st.StartTime = k.clock.Duration(p.start.Sub(k.boot))
	if cpu, ok := p.CPUTime(); ok {
		// The runtime's thread clock counts user and system time together.
		st.UserTime = k.clock.Duration(cpu)
	}
	return st
}

func (e procEntry) FDs() []int {
	if e.p.fds == nil {
		return nil
	}
	return e.p.fds.FDs()
}

func (e procEntry) FD(fd int) (vfs.File, bool) {
	if e.p.fds == nil {
		return nil, false
	}
	f, err := e.p.fds.Get(fd)
	if err != nil {
		return nil, false
	}
	// procfs uses the file only within the call; the table keeps its own
	// reference, so dropping ours at once is safe while fd stays open.
	f.DecRef()
	return f, true
}
