package kernel_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
)

// TestJobKillsDetachedDescendants: a child that left its parent's session
// (setsid) and group, and a grandchild forking on in a loop, all belong
// to the job of the process the host spawned; one Kill ends them all and
// later spawns from the job fail.
func TestJobKillsDetachedDescendants(t *testing.T) {
	var spawnErr atomic.Value
	var forks atomic.Int64
	progs := goLoader{
		"top": func(ctx context.Context, p *kernel.Process) int {
			if _, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"detach"}, Env: []string{"PATH=/bin"}}); err != nil {
				return 1
			}
			return 0 // exits at once, leaving its detached child behind
		},
		"detach": func(ctx context.Context, p *kernel.Process) int {
			if _, err := p.Setsid(); err != nil {
				return 2
			}
			for {
				c, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"sleeper"}, Env: []string{"PATH=/bin"}, NewGroup: true})
				if err != nil {
					spawnErr.Store(err)
					<-ctx.Done()
					return 3
				}
				forks.Add(1)
				_ = c
				select {
				case <-ctx.Done():
					return 4
				case <-time.After(time.Millisecond):
				}
			}
		},
		"sleeper": func(ctx context.Context, p *kernel.Process) int {
			<-ctx.Done()
			return 0
		},
	}
	k := newKernel(t, kernel.Limits{Processes: 64}, progs)
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"top"}, Env: []string{"PATH=/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.HostWait(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for forks.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	job := p.Job()
	if len(job.Live()) < 2 {
		t.Fatalf("the detached descendants are not in the job: live %v", job.Live())
	}
	// The detached child is in another session and group than the
	// process the host spawned: a group kill would miss it.
	for _, pid := range job.Live() {
		q, _ := k.Process(pid)
		if q.SID() == p.SID() {
			t.Fatalf("pid %d did not detach", pid)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := job.Kill(ctx); err != nil {
		t.Fatalf("Kill: %v (live %v)", err, job.Live())
	}
	if live := job.Live(); len(live) != 0 {
		t.Fatalf("members left after Kill: %v", live)
	}
	for _, pid := range k.PIDs() {
		if pid != 1 {
			q, _ := k.Process(pid)
			if q.State() != kernel.StateZombie {
				t.Fatalf("pid %d %v still runs", pid, q.Argv())
			}
		}
	}
	// The forker's last spawn, if it raced the kill, was refused.
	if err, _ := spawnErr.Load().(error); err != nil && !errors.Is(err, kernel.ErrJobKilled) && !errors.Is(err, errno.EINTR) {
		t.Fatalf("spawn during the kill: %v", err)
	}
}

// TestSubJob: a sub-job's kill leaves its creator alive; the creator's
// job's kill takes the sub-job too.
func TestSubJob(t *testing.T) {
	started := make(chan *kernel.Process, 1)
	progs := goLoader{
		"helper": func(ctx context.Context, p *kernel.Process) int {
			c, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"sleeper"}, Env: []string{"PATH=/bin"}, NewJob: true})
			if err != nil {
				return 1
			}
			started <- c
			<-ctx.Done()
			return 0
		},
		"sleeper": func(ctx context.Context, p *kernel.Process) int {
			<-ctx.Done()
			return 0
		},
	}
	k := newKernel(t, kernel.Limits{}, progs)
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"helper"}, Env: []string{"PATH=/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	c := <-started
	if c.Job() == p.Job() {
		t.Fatal("NewJob did not make a sub-job")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := c.Job().Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if p.State() == kernel.StateZombie {
		t.Fatal("killing the sub-job killed its creator")
	}
	if err := p.Job().Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.HostWait(ctx); err != nil {
		t.Fatal(err)
	}
	if live := p.Job().Live(); len(live) != 0 {
		t.Fatalf("left: %v", live)
	}
}
