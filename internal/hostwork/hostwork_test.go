package hostwork

import (
	"errors"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel"
)

// account is a hostwork.Account that measures the thread as the kernel
// does (kernel.ThreadCPUClock) and records what was charged.
type account struct {
	refuse  error
	charged time.Duration
}

func (a *account) BeginHostWork() (func(), error) {
	if a.refuse != nil {
		return nil, a.refuse
	}
	clock, stop := kernel.ThreadCPUClock()
	return func() {
		stop()
		a.charged, _ = clock()
	}, nil
}

func TestRunChargesTheThreadsCPU(t *testing.T) {
	a := &account{}
	err := <-Go(a, func() error {
		end := time.Now().Add(100 * time.Millisecond)
		for time.Now().Before(end) {
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// 100 ms of spinning; at least some of it on the CPU even on a busy
	// machine, and never more than the wall time.
	if a.charged <= 0 || a.charged > time.Second {
		t.Fatalf("charged %v for a 100 ms spin", a.charged)
	}
}

func TestRunRefusedAndPanics(t *testing.T) {
	no := errors.New("spent")
	if err := Run(&account{refuse: no}, func() error { t.Fatal("ran"); return nil }); !errors.Is(err, no) {
		t.Fatalf("refused account: %v", err)
	}
	if err := Run(&account{}, func() error { panic("boom") }); err == nil {
		t.Fatal("a panic was not reported")
	}
}
