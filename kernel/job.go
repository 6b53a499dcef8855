package kernel

import (
	"context"
	"errors"
	"time"
)

// Job is the lineage of one call that started a process: the process
// and every descendant it ever spawns, whatever session, process group
// or parent it later has. Process groups and sessions are the guest's to
// change (setsid, setpgid, node's detached spawn), so they cannot bound
// what a call started; a job can, because membership is fixed at spawn
// and inherited, and no guest call leaves it.
//
// A process the host spawns (SpawnHost) starts a new job; a process a
// guest spawns joins its parent's job, or with SpawnOptions.NewJob a
// sub-job of it (a run-to-completion helper that must kill what its
// child started without killing itself). Killing a job kills its
// sub-jobs too.
type Job struct {
	k      *Kernel
	parent *Job
	// killed is set (under k.mu) once the job is being killed: no
	// process may join it or a sub-job from then on, so a member that
	// forks while the kill runs cannot leave a survivor behind.
	killed bool
}

// ErrJobKilled is the error of a spawn into a job that is being killed
// (its caller's deadline passed); it matches errno.EAGAIN's meaning for
// the guest: the process cannot be created.
var ErrJobKilled = errors.New("kernel: the job of the spawning process was killed")

// Job returns the lineage p belongs to (nil for init).
func (p *Process) Job() *Job { return p.job }

// withinLocked reports whether j is q or one of q's ancestors.
func (j *Job) withinLocked(q *Job) bool {
	for ; q != nil; q = q.parent {
		if q == j {
			return true
		}
	}
	return false
}

// deadLocked reports whether j or a job above it is being killed.
func (j *Job) deadLocked() bool {
	for ; j != nil; j = j.parent {
		if j.killed {
			return true
		}
	}
	return false
}

// newJobLocked returns a job under parent (nil: a root job).
func (k *Kernel) newJobLocked(parent *Job) *Job {
	return &Job{k: k, parent: parent}
}

// liveLocked returns the members of j (sub-jobs included) whose program
// has not exited yet.
func (j *Job) liveLocked() []*Process {
	var out []*Process
	for _, p := range j.k.procs {
		if p.state != StateZombie && j.withinLocked(p.job) {
			out = append(out, p)
		}
	}
	return out
}

// Live returns the pids of the job's members (sub-jobs included) that
// have not exited.
func (j *Job) Live() []int {
	j.k.mu.Lock()
	defer j.k.mu.Unlock()
	var pids []int
	for _, p := range j.liveLocked() {
		pids = append(pids, p.pid)
	}
	return pids
}

// killPass marks the job killed and sends SIGKILL to every live member;
// it returns the members it signalled.
func (j *Job) killPass() []*Process {
	k := j.k
	k.mu.Lock()
	j.killed = true
	live := j.liveLocked()
	k.mu.Unlock()
	for _, p := range live {
		p.terminate(SIGKILL)
	}
	return live
}

// jobKillInterval is how often Kill repeats its SIGKILL while members
// remain.
const jobKillInterval = 20 * time.Millisecond

// Kill ends the job: every member, detached descendants included, gets
// SIGKILL, and no process can join the job any more. It returns when no
// member's program is running, or with ctx's error when ctx ends first
// (a runtime that does not honour its process context promptly).
//
// The kill repeats until the job is empty. Spawns into a killed job are
// refused, so one pass should do; the repetition is a backstop that does
// not depend on that reasoning holding for every path that creates
// processes.
func (j *Job) Kill(ctx context.Context) error {
	tick := time.NewTicker(jobKillInterval)
	defer tick.Stop()
	for {
		live := j.killPass()
		if len(live) == 0 {
			return nil
		}
		// Wait for the ones signalled, or kill again at the next tick.
	wait:
		for _, p := range live {
			select {
			case <-p.done:
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
				break wait
			}
		}
	}
}
