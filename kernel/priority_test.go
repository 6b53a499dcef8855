package kernel_test

import (
	"context"
	"errors"
	"testing"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/errno"
)

// setpriority(2) semantics: an unprivileged process may lower its
// priority (raise its nice value) but not raise it back (EACCES), values
// are clamped to [-20, 19], a child inherits its parent's, another user's
// process is EPERM and a missing one ESRCH.
func TestPriority(t *testing.T) {
	type result struct {
		errs  []error
		nices []int
	}
	got := make(chan result, 1)
	k := newKernel(t, kernel.Limits{}, goLoader{
		"child": func(ctx context.Context, p *kernel.Process) int {
			n, _ := p.Getpriority(0)
			return n
		},
		"probe": func(ctx context.Context, p *kernel.Process) int {
			var r result
			note := func(err error) { r.errs = append(r.errs, err) }
			nice := func() { n, err := p.Getpriority(0); note(err); r.nices = append(r.nices, n) }
			nice()                          // 0
			note(p.Setpriority(0, 5))       // lower the priority: allowed
			nice()                          // 5
			note(p.Setpriority(p.PID(), 4)) // raise it back: EACCES
			note(p.Setpriority(0, 99))      // clamped to 19
			nice()                          // 19
			note(p.Setpriority(-1, 19))     // no such process
			note(p.Setpriority(1, 19))      // init is uid 0: EPERM
			c, err := p.Spawn(ctx, kernel.SpawnOptions{Argv: []string{"/bin/child"}})
			note(err)
			if err == nil {
				_, st, err := p.Wait(ctx, c.PID(), 0)
				note(err)
				r.nices = append(r.nices, st.Code)
			}
			got <- r
			return 0
		},
	})
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"/bin/probe"}, Creds: &kernel.Creds{UID: 1000, GID: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := k.Init().Wait(context.Background(), p.PID(), 0); err != nil {
		t.Fatal(err)
	}
	r := <-got
	wantErrs := []error{nil, nil, nil, errno.EACCES, nil, nil, errno.ESRCH, errno.EPERM, nil, nil}
	if len(r.errs) != len(wantErrs) {
		t.Fatalf("errors %v, want %v", r.errs, wantErrs)
	}
	for i, want := range wantErrs {
		if (want == nil) != (r.errs[i] == nil) || (want != nil && !errors.Is(r.errs[i], want)) {
			t.Errorf("step %d: %v, want %v", i, r.errs[i], want)
		}
	}
	if want := []int{0, 5, 19, 19}; len(r.nices) != len(want) || r.nices[0] != 0 || r.nices[1] != 5 || r.nices[2] != 19 || r.nices[3] != 19 {
		t.Errorf("nice values %v, want %v", r.nices, want)
	}
}
