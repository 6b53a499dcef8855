// Command buildwasm builds the userland WASI modules into a directory,
// for images that run secexec without its source (see deploy/Dockerfile
// and $SECEXEC_USERLAND_DIR). Run it from the repository root.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/secexec/secexec/userland/internal/wasmbuild"
)

func main() {
	out := flag.String("out", "", "directory to write NAME.wasm into (required)")
	dir := flag.String("dir", "userland", "the userland directory")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "buildwasm: -out DIR is required")
		os.Exit(2)
	}
	if err := wasmbuild.Build(context.Background(), *dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
