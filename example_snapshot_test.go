package secexec_test

import (
	"context"
	"fmt"
	"os"

	"github.com/secexec/secexec"
)

// A snapshot saves what guests wrote (and the VM's options) to a store on
// disk; Options.From starts another VM from it, in this program or a
// later one.
func ExampleVM_Snapshot() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "snapshots")
	defer os.RemoveAll(dir)
	store, err := secexec.OpenSnapshotStore(dir)
	if err != nil {
		panic(err)
	}

	vm, err := secexec.NewVM(ctx, secexec.Options{Permissions: secexec.AllowAll(), Env: map[string]string{"STAGE": "built"}})
	if err != nil {
		panic(err)
	}
	defer vm.Close()
	_, _ = vm.Exec(ctx, "echo artifact > /workspace/out.txt", nil)
	snap, err := vm.Snapshot(ctx, store, secexec.SnapshotOptions{Labels: map[string]string{"step": "build"}})
	if err != nil {
		panic(err)
	}

	restored, err := secexec.NewVM(ctx, secexec.Options{From: snap})
	if err != nil {
		panic(err)
	}
	defer restored.Close()
	res, _ := restored.Exec(ctx, `cat /workspace/out.txt; echo $STAGE`, nil)
	fmt.Printf("%s%s\n", res.Stdout, snap.Labels["step"])
	// Output:
	// artifact
	// built
	// build
}

// A fork starts with its parent's files, shared copy-on-write: from then
// on each side's writes are its own.
func ExampleVM_Fork() {
	ctx := context.Background()
	vm, err := secexec.NewVM(ctx, secexec.Options{Permissions: secexec.AllowAll()})
	if err != nil {
		panic(err)
	}
	defer vm.Close()
	_ = vm.FS().WriteFile(ctx, "/workspace/plan.txt", []byte("v1"), 0o644)

	fork, err := vm.Fork(ctx)
	if err != nil {
		panic(err)
	}
	defer fork.Close()
	_ = fork.FS().WriteFile(ctx, "/workspace/plan.txt", []byte("v2 (tried in the fork)"), 0o644)

	a, _ := vm.FS().ReadFile(ctx, "/workspace/plan.txt")
	b, _ := fork.FS().ReadFile(ctx, "/workspace/plan.txt")
	fmt.Printf("%s | %s\n", a, b)
	// Output: v1 | v2 (tried in the fork)
}
