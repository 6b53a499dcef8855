// Command buildwasm rebuilds the userland WASI modules; go generate runs
// it from the userland directory.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/secexec/secexec/userland/internal/wasmbuild"
)

func main() {
	out := flag.String("out", "wasm", "directory to write NAME.wasm into")
	dir := flag.String("dir", ".", "the userland directory")
	flag.Parse()
	if err := wasmbuild.Build(context.Background(), *dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
