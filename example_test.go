package secexec_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/secexec/secexec"
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
