package security_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/secexec/secexec"
)

// Fault domains in the SDK: a guest that aborts its engine process (a V8
// fatal out-of-memory error) loses the VMs of its engine group on that
// Host, and nothing else: a VM of another group, its files and its
// processes carry on, as does a VM of the default Host. The lost VMs
// report a typed reason.
func TestEngineGroupsSurviveEachOther(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h := secexec.NewHost(secexec.HostOptions{})
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	hostVM := func(group string) *secexec.VM {
		t.Helper()
		vm, err := h.NewVM(ctx, secexec.Options{Permissions: secexec.AllowAll(), EngineGroup: group})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = vm.Close() })
		return vm
	}
	victim, sibling, other := hostVM("a"), hostVM("a"), hostVM("b")
	elsewhere := newVM(t, secexec.Options{Permissions: secexec.AllowAll()})
	if err := other.FS().WriteFile(ctx, "/workspace/keep.txt", []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A process of the other group, running across the crash.
	p, err := other.Spawn(ctx, []string{"sh", "-c", "read line; echo got $line"}, nil)
	if err != nil {
		t.Fatal(err)
	}

	_, err = victim.Run(ctx, []string{"node", "-e", "new Array(2e8).fill(1.5)"}, nil)
	var lost *secexec.EngineLostError
	if !errors.As(err, &lost) || lost.Reason != secexec.EngineOutOfMemory {
		t.Fatalf("fatal OOM: %v; want an EngineLostError with reason %s", err, secexec.EngineOutOfMemory)
	}
	// The VM of the same group shared the engine, and is lost with it.
	select {
	case <-sibling.Done():
	case <-ctx.Done():
		t.Fatal("the VM of the same group is not lost")
	}
	if err := sibling.Err(); !errors.As(err, &lost) || lost.Reason != secexec.EngineOutOfMemory {
		t.Fatalf("same group: %v", err)
	}

	// The other group's VM: its process, its files, new processes.
	if _, err := p.Stdin.Write([]byte("through\n")); err != nil {
		t.Fatal(err)
	}
	_ = p.Stdin.Close()
	out := make([]byte, 64)
	n, _ := p.Stdout.Read(out)
	if st, err := p.Wait(ctx); err != nil || st.ExitCode != 0 || string(out[:n]) != "got through\n" {
		t.Fatalf("the other group's process: %v %v %q", st, err, out[:n])
	}
	if data, err := other.FS().ReadFile(ctx, "/workspace/keep.txt"); err != nil || string(data) != "kept\n" {
		t.Fatalf("the other group's file: %q %v", data, err)
	}
	if other.Err() != nil || elsewhere.Err() != nil {
		t.Fatalf("bystanders lost: %v %v", other.Err(), elsewhere.Err())
	}
	usable(t, other)
	usable(t, elsewhere)
	// The group gets a fresh engine.
	usable(t, hostVM("a"))
}
