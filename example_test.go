package secexec_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/kernel/policy"
)

// A VM's filesystem is its own: files written through the API live in the
// VM's memory, not on the host.
func ExampleFS() {
	ctx := context.Background()
	vm, err := secexec.NewVM(ctx, secexec.Options{})
	if err != nil {
		panic(err)
	}
	defer vm.Close()

	_ = vm.FS().WriteFile(ctx, "/workspace/notes.txt", []byte("hello\n"), 0o644)
	data, _ := vm.FS().ReadFile(ctx, "/workspace/notes.txt")
	fmt.Printf("%q\n", data)

	_, err = vm.FS().Stat(ctx, "/workspace/missing")
	fmt.Println(errors.Is(err, fs.ErrNotExist))
	// Output:
	// "hello\n"
	// true
}

// AsGuest acts for someone less trusted than the embedder (an agent's
// file tools, say): as the VM's guest user, under the VM's policy, with
// each path resolved and checked in the same kernel walk that acts on it.
// Here the policy denies /workspace/secret; a symlink the guest could
// make does not lead around it, while the host's FS reaches everything.
func ExampleFS_AsGuest() {
	ctx := context.Background()
	perms := secexec.AllowAll().DenyFS(policy.AllFSOps(), "/workspace/secret", "/workspace/secret/**")
	vm, err := secexec.NewVM(ctx, secexec.Options{Permissions: perms})
	if err != nil {
		panic(err)
	}
	defer vm.Close()

	host, guest := vm.FS(), vm.FS().AsGuest()
	_ = host.MkdirAll(ctx, "/workspace/secret", 0o755)
	_ = host.WriteFile(ctx, "/workspace/secret/key", []byte("k"), 0o644)
	_ = host.Symlink(ctx, "secret/key", "/workspace/door")

	_, err = guest.ReadFile(ctx, "/workspace/door")
	fmt.Println(errors.Is(err, fs.ErrPermission))
	data, _ := host.ReadFile(ctx, "/workspace/door")
	fmt.Printf("%q\n", data)
	// Output:
	// true
	// "k"
}

// A command line runs in the VM's shell (or, as here, directly when it is
// a plain list of words); its output comes back as bytes. The VM runs in
// the shared engine process, which the program's first VM starts; the
// first run on a machine fetches and caches the userland.
func ExampleVM_Exec() {
	ctx := context.Background()
	vm, err := secexec.NewVM(ctx, secexec.Options{Permissions: secexec.AllowAll()})
	if err != nil {
		panic(err)
	}
	defer vm.Close()

	_ = vm.FS().WriteFile(ctx, "/workspace/in.txt", []byte("b\na\n"), 0o644)
	res, err := vm.Exec(ctx, "sort /workspace/in.txt", nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d %q\n", res.ExitCode, res.Stdout)
	// Output: 0 "a\nb\n"
}

// Evaluate returns the JSON value of a JavaScript expression run by node
// in the VM; promises are awaited.
func ExampleJS_Evaluate() {
	ctx := context.Background()
	vm, err := secexec.NewVM(ctx, secexec.Options{Permissions: secexec.AllowAll()})
	if err != nil {
		panic(err)
	}
	defer vm.Close()

	v, err := vm.JS().Evaluate(ctx, `Promise.resolve([1, 2, 3].map(n => n * 2))`, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(v))
	// Output: [2,4,6]
}
