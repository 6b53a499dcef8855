package procfs

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/secexec/secexec/kernel/vfs"
)

// Linux's user-visible clock tick (USER_HZ) and page size, which the stat
// and statm formats are counted in.
const (
	clockTicks = 100
	pageSize   = 4096
)

// commLen is TASK_COMM_LEN-1: the bytes of a command name Linux keeps.
const commLen = 15

// generate renders the content of a generated file at open time.
func (fs *FS) generate(n node) []byte {
	k := fs.k
	switch n.kind {
	case kCPUInfo:
		return []byte(cpuinfo)
	case kLoadavg:
		return renderLoadavg(fs.statuses())
	case kMeminfo:
		return renderMeminfo(k.MemInfo())
	case kMounts, kPidMounts:
		return renderMounts(k.Mounts())
	case kStat:
		return renderKernelStat(k.Boot(), k.Uptime(), fs.statuses())
	case kUptime:
		return renderUptime(k.Uptime())
	case kVersion:
		return []byte("Linux version " + OSRelease + " (secexec) " + OSVersion + "\n")
	case kDomainname:
		return []byte("(none)\n")
	case kHostname:
		return []byte(k.Hostname() + "\n")
	case kOSRelease:
		return []byte(OSRelease + "\n")
	case kOSType:
		return []byte(OSType + "\n")
	case kKernelVersion:
		return []byte(OSVersion + "\n")
	case kComm:
		return []byte(comm(n.proc.Status()) + "\n")
	case kPidStat:
		return renderStat(n.proc.Status())
	case kStatm:
		return renderStatm(n.proc.Status())
	case kStatus:
		return renderStatus(n.proc.Status(), n.proc.FDs())
	case kLimits:
		return renderLimits(k.Limits())
	}
	return nil
}

// statuses snapshots every live process's status, for the files that
// summarise them all.
func (fs *FS) statuses() []Status {
	pids := fs.k.PIDs()
	out := make([]Status, 0, len(pids))
	for _, pid := range pids {
		if p, ok := fs.k.Process(pid); ok {
			out = append(out, p.Status())
		}
	}
	return out
}

// cpuinfo describes one generic CPU: the guest must not learn the host's
// model, flags or count.
const cpuinfo = `processor	: 0
vendor_id	: secexec
cpu family	: 0
model		: 0
model name	: secexec virtual CPU
stepping	: 0
cpu MHz		: 1000.000
cache size	: 0 KB
physical id	: 0
siblings	: 1
core id		: 0
cpu cores	: 1
fpu		: yes
fpu_exception	: yes
cpuid level	: 0
wp		: yes
flags		:
bogomips	: 2000.00
clflush size	: 64
cache_alignment	: 64
address sizes	: 48 bits physical, 48 bits virtual
power management:

`

// comm returns the command name as Linux keeps it: at most 15 bytes.
func comm(s Status) string {
	if len(s.Name) > commLen {
		return s.Name[:commLen]
	}
	return s.Name
}

// state returns the state letter and its name as status shows them.
func state(s Status) (byte, string) {
	switch s.State {
	case 'R':
		return 'R', "running"
	case 'D':
		return 'D', "disk sleep"
	case 'T':
		return 'T', "stopped"
	case 'Z':
		return 'Z', "zombie"
	case 'X':
		return 'X', "dead"
	case 'I':
		return 'I', "idle"
	}
	return 'S', "sleeping"
}

func threads(s Status) int { return max(s.Threads, 1) }

func ticks(d time.Duration) int64 {
	if d < 0 {
		return 0
	}
	return int64(d / (time.Second / clockTicks))
}

// escapeName escapes a command name for status as Linux does: only
// newline and backslash, so the field stays on one line.
func escapeName(s string) string {
	if !strings.ContainsAny(s, "\n\\") {
		return s
	}
	return strings.NewReplacer("\\", `\\`, "\n", `\n`).Replace(s)
}

// renderStatus renders /proc/<pid>/status in Linux's format.
func renderStatus(s Status, fds []int) []byte {
	st, stName := state(s)
	// FDSize is the fd table's capacity, which Linux grows in steps of 64.
	fdSize := 64
	for _, fd := range fds {
		for fd >= fdSize && fdSize < 1<<30 {
			fdSize *= 2
		}
	}
	caps := "0000000000000000"
	if s.UID == 0 {
		caps = "000001ffffffffff"
	}
	kb := func(b uint64) string { return fmt.Sprintf("%8d kB", b/1024) }
	var b []byte
	b = fmt.Appendf(b, "Name:\t%s\n", escapeName(comm(s)))
	b = fmt.Appendf(b, "Umask:\t%04o\n", s.Umask&0o777)
	b = fmt.Appendf(b, "State:\t%c (%s)\n", st, stName)
	b = fmt.Appendf(b, "Tgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\n", s.PID, s.PID, s.PPID)
	b = fmt.Appendf(b, "Uid:\t%d\t%d\t%d\t%d\n", s.UID, s.UID, s.UID, s.UID)
	b = fmt.Appendf(b, "Gid:\t%d\t%d\t%d\t%d\n", s.GID, s.GID, s.GID, s.GID)
	b = fmt.Appendf(b, "FDSize:\t%d\nGroups:\t\n", fdSize)
	b = fmt.Appendf(b, "NStgid:\t%d\nNSpid:\t%d\nNSpgid:\t%d\nNSsid:\t%d\n", s.PID, s.PID, s.PGID, s.SID)
	b = fmt.Appendf(b, "VmPeak:\t%s\nVmSize:\t%s\nVmLck:\t%s\nVmPin:\t%s\n", kb(s.VmSize), kb(s.VmSize), kb(0), kb(0))
	b = fmt.Appendf(b, "VmHWM:\t%s\nVmRSS:\t%s\n", kb(s.VmRSS), kb(s.VmRSS))
	b = fmt.Appendf(b, "VmData:\t%s\nVmStk:\t%s\nVmExe:\t%s\nVmLib:\t%s\nVmPTE:\t%s\nVmSwap:\t%s\n",
		kb(s.VmSize), kb(0), kb(0), kb(0), kb(0), kb(0))
	b = fmt.Appendf(b, "Threads:\t%d\n", threads(s))
	b = append(b, "SigQ:\t0/0\n"...)
	for _, f := range []string{"SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt"} {
		b = fmt.Appendf(b, "%s:\t0000000000000000\n", f)
	}
	b = fmt.Appendf(b, "CapInh:\t0000000000000000\nCapPrm:\t%s\nCapEff:\t%s\n", caps, caps)
	b = append(b, "CapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\n"...)
	b = append(b, "NoNewPrivs:\t0\nSeccomp:\t0\nCpus_allowed:\t1\nCpus_allowed_list:\t0\n"...)
	b = append(b, "voluntary_ctxt_switches:\t0\nnonvoluntary_ctxt_switches:\t0\n"...)
	return b
}

// renderStat renders /proc/<pid>/stat: 52 fields on one line, as
// fs/proc/array.c prints them. The command name is printed raw between
// parentheses, so parsers must find the last ')'. The address fields are
// what Linux shows a reader that may not inspect the address space.
func renderStat(s Status) []byte {
	st, _ := state(s)
	tpgid := s.TPGID
	if tpgid <= 0 {
		tpgid = -1
	}
	var b []byte
	b = fmt.Appendf(b, "%d (%s) %c %d %d %d %d %d 4194304 0 0 0 0 %d %d 0 0 20 0 %d 0 %d %d %d 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		s.PID, comm(s), st, s.PPID, s.PGID, s.SID, s.TTY, tpgid,
		ticks(s.UserTime), ticks(s.SysTime), threads(s), ticks(s.StartTime),
		s.VmSize, s.VmRSS/pageSize)
	return b
}

// renderStatm renders /proc/<pid>/statm, in pages.
func renderStatm(s Status) []byte {
	return fmt.Appendf(nil, "%d %d 0 0 0 %d 0\n", s.VmSize/pageSize, s.VmRSS/pageSize, s.VmSize/pageSize)
}

// renderMeminfo renders /proc/meminfo from the VM's limit and free memory.
func renderMeminfo(total, free uint64) []byte {
	free = min(free, total)
	used := total - free
	rows := []struct {
		name string
		kb   uint64
	}{
		{"MemTotal", total / 1024},
		{"MemFree", free / 1024},
		{"MemAvailable", free / 1024},
		{"Buffers", 0},
		{"Cached", 0},
		{"SwapCached", 0},
		{"Active", used / 1024},
		{"Inactive", 0},
		{"SwapTotal", 0},
		{"SwapFree", 0},
		{"Dirty", 0},
		{"Writeback", 0},
		{"AnonPages", used / 1024},
		{"Mapped", 0},
		{"Shmem", 0},
		{"Slab", 0},
		{"CommitLimit", total / 1024},
		{"Committed_AS", used / 1024},
	}
	var b []byte
	for _, r := range rows {
		b = fmt.Appendf(b, "%-16s%8d kB\n", r.name+":", r.kb)
	}
	b = append(b, "HugePages_Total:       0\nHugePages_Free:        0\nHugepagesize:       2048 kB\n"...)
	return b
}

// renderUptime renders /proc/uptime: the VM's uptime and idle time (taken
// as equal: the VM's one CPU is idle whenever no guest code runs) in
// seconds with two decimals.
func renderUptime(up time.Duration) []byte {
	cs := max(up/(10*time.Millisecond), 0)
	return fmt.Appendf(nil, "%d.%02d %d.%02d\n", cs/100, cs%100, cs/100, cs%100)
}

// renderLoadavg renders /proc/loadavg. The averages are zero (the VM keeps
// no history); the counts are the VM's.
func renderLoadavg(procs []Status) []byte {
	running, last := 0, 0
	for _, s := range procs {
		if s.State == 'R' {
			running++
		}
		last = max(last, s.PID)
	}
	return fmt.Appendf(nil, "0.00 0.00 0.00 %d/%d %d\n", running, len(procs), last)
}

// renderKernelStat renders /proc/stat for the VM's one CPU.
func renderKernelStat(boot time.Time, up time.Duration, procs []Status) []byte {
	var user, sys int64
	running := 0
	for _, s := range procs {
		user += ticks(s.UserTime)
		sys += ticks(s.SysTime)
		if s.State == 'R' {
			running++
		}
	}
	idle := max(ticks(up)-user-sys, 0)
	var b []byte
	for _, cpu := range []string{"cpu ", "cpu0"} {
		b = fmt.Appendf(b, "%s %d 0 %d %d 0 0 0 0 0 0\n", cpu, user, sys, idle)
	}
	b = fmt.Appendf(b, "intr 0\nctxt 0\nbtime %d\nprocesses %d\nprocs_running %d\nprocs_blocked 0\n",
		boot.Unix(), len(procs), running)
	b = append(b, "softirq 0 0 0 0 0 0 0 0 0 0 0\n"...)
	return b
}

// renderMounts renders /proc/mounts: one "source target type options 0 0"
// line per mount, with space, tab, newline and backslash in fields escaped
// as octal, as Linux's mangle() does, so a path cannot forge a line.
func renderMounts(ms []MountInfo) []byte {
	var b []byte
	for _, m := range ms {
		b = appendMangled(b, m.Source, "none")
		b = append(b, ' ')
		b = appendMangled(b, m.Target, "/")
		b = append(b, ' ')
		b = appendMangled(b, m.FSType, "none")
		b = append(b, ' ')
		b = appendMangled(b, m.Options, "rw")
		b = append(b, " 0 0\n"...)
	}
	return b
}

func appendMangled(b []byte, s, empty string) []byte {
	if s == "" {
		s = empty
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\\':
			b = append(b, '\\', '0'+c>>6, '0'+c>>3&7, '0'+c&7)
		default:
			b = append(b, c)
		}
	}
	return b
}

// TTYIndexer is an open file that is a pseudo-terminal master: fdinfo
// shows its index as Linux does ("tty-index:"), which is how a guest
// without the TIOCGPTN ioctl learns which /dev/pts/N a /dev/ptmx open
// made.
type TTYIndexer interface {
	TTYIndex() int
}

// renderFdinfo is /proc/<pid>/fdinfo/<fd>: the open file's offset and
// flags (octal, as Linux prints them), and a terminal master's index.
func renderFdinfo(ctx context.Context, f vfs.File) []byte {
	// lseek(fd, 0, SEEK_CUR) reads the offset without moving it; pipes,
	// sockets and terminals have none (ESPIPE) and show 0, as on Linux.
	pos, err := f.Seek(ctx, 0, vfs.SeekCur)
	if err != nil {
		pos = 0
	}
	var ino uint64
	if st, err := f.Stat(ctx); err == nil {
		ino = st.Ino
	}
	out := fmt.Sprintf("pos:\t%d\nflags:\t0%o\nmnt_id:\t0\nino:\t%d\n", pos, uint32(f.Flags()), ino)
	if t, ok := f.(TTYIndexer); ok {
		out += fmt.Sprintf("tty-index:\t%d\n", t.TTYIndex())
	}
	return []byte(out)
}

// renderLimits renders /proc/<pid>/limits in Linux's layout
// (fs/proc/base.c proc_pid_limits). The rows secexec enforces per process
// carry the VM's numbers; a core file is never written, so its limit is
// 0; the rest are unlimited, as nothing bounds them per process.
func renderLimits(l Limits) []byte {
	num := func(v uint64) string {
		if v == 0 {
			return "unlimited"
		}
		return fmt.Sprint(v)
	}
	// RLIMIT_CPU counts whole seconds; a limit of part of one still
	// stops the process, so it rounds up.
	cpu := uint64((l.CPUTime + time.Second - 1) / time.Second)
	rows := []struct{ name, soft, hard, unit string }{
		{"Max cpu time", num(cpu), num(cpu), "seconds"},
		{"Max file size", "unlimited", "unlimited", "bytes"},
		{"Max data size", num(l.Memory), num(l.Memory), "bytes"},
		{"Max stack size", "unlimited", "unlimited", "bytes"},
		{"Max core file size", "0", "unlimited", "bytes"},
		{"Max resident set", "unlimited", "unlimited", "bytes"},
		{"Max processes", num(l.Processes), num(l.Processes), "processes"},
		{"Max open files", num(l.OpenFiles), num(l.OpenFiles), "files"},
		{"Max locked memory", "unlimited", "unlimited", "bytes"},
		{"Max address space", num(l.Memory), num(l.Memory), "bytes"},
		{"Max file locks", "unlimited", "unlimited", "locks"},
		{"Max pending signals", "unlimited", "unlimited", "signals"},
		{"Max msgqueue size", "unlimited", "unlimited", "bytes"},
		{"Max nice priority", "0", "0", ""},
		{"Max realtime priority", "0", "0", ""},
		{"Max realtime timeout", "unlimited", "unlimited", "us"},
	}
	b := fmt.Appendf(nil, "%-25s %-20s %-20s %-10s\n", "Limit", "Soft Limit", "Hard Limit", "Units")
	for _, r := range rows {
		b = fmt.Appendf(b, "%-25s %-20s %-20s %-10s\n", r.name, r.soft, r.hard, r.unit)
	}
	return b
}
