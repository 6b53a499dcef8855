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
