package kernel

import "github.com/secexec/secexec/kernel/errno"

// The nice values of setpriority(2): -20 is the highest priority, 19 the
// lowest.
const (
	NiceMin = -20
	NiceMax = 19
)

// priorityTarget is the process pid designates for getpriority and
// setpriority with PRIO_PROCESS: 0 is the caller.
func (p *Process) priorityTarget(pid int) (*Process, error) {
	if pid == 0 {
		return p, nil
	}
	if pid < 0 {
		return nil, errno.ESRCH
	}
	p.k.mu.Lock()
	t, ok := p.k.procs[pid]
	p.k.mu.Unlock()
	if !ok || t.State() == StateZombie {
		return nil, errno.ESRCH
	}
	return t, nil
}

// Getpriority returns the nice value of process pid (0: the caller), as
// getpriority(2) with PRIO_PROCESS. The kernel's scheduling is the host's,
// so the value is kept and inherited but weighs nothing: programs that
// lower their own priority (build tools, test runners) see what they set.
func (p *Process) Getpriority(pid int) (int, error) {
	t, err := p.priorityTarget(pid)
	if err != nil {
		return 0, err
	}
	return int(t.nice.Load()), nil
}

// Setpriority sets the nice value of process pid (0: the caller),
// clamped to [NiceMin, NiceMax], as setpriority(2) with PRIO_PROCESS and
// RLIMIT_NICE 0: only uid 0 may raise a priority (EACCES), and only uid 0
// or the owner may change another process's (EPERM).
func (p *Process) Setpriority(pid, nice int) error {
	t, err := p.priorityTarget(pid)
	if err != nil {
		return err
	}
	nice = min(max(nice, NiceMin), NiceMax)
	if p.uid != 0 && t.uid != p.uid {
		return errno.EPERM
	}
	for {
		cur := t.nice.Load()
		if p.uid != 0 && int32(nice) < cur {
			return errno.EACCES
		}
		if t.nice.CompareAndSwap(cur, int32(nice)) {
			return nil
		}
	}
}
