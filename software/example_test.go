package software_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/secexec/secexec/software"
)

// Install the default userland into the default cache directory and read
// the module behind a command.
func Example() {
	ctx := context.Background()
	store, err := software.Open(ctx, software.Options{Progress: software.ProgressWriter(os.Stderr)})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if err := store.Ensure(ctx); err != nil { // every pinned package
		log.Fatal(err)
	}
	ls, ok := store.Command("ls")
	if !ok {
		log.Fatal("no ls")
	}
	wasm, err := ls.Module()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s from %s@%s: %d bytes, key %s\n", ls.Name, ls.Package, ls.Version, len(wasm), ls.Fingerprint)
}
