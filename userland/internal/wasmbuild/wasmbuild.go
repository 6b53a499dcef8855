// Package wasmbuild compiles secexec's userland commands to WASI modules
// reproducibly: the same sources and Go toolchain give byte-identical
// output, so a committed module can be checked against a fresh build.
package wasmbuild

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Commands are the userland programs, each a package main in a directory
// of the same name under the userland directory.
var Commands = []string{"bash", "git", "grep", "jq"}

// Build compiles every command in userlandDir into outDir/NAME.wasm with
// GOOS=wasip1 GOARCH=wasm. Paths, VCS stamps and the build ID are left out
// of the binaries, and the caller's GOFLAGS and GOWASM are ignored, so the
// result depends only on the sources and the toolchain version.
func Build(ctx context.Context, userlandDir, outDir string) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	absOut, err := filepath.Abs(outDir)
	if err != nil {
		return err
	}
	for _, name := range Commands {
		cmd := exec.CommandContext(ctx, "go", "build",
			"-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=",
			"-o", filepath.Join(absOut, name+".wasm"), "./"+name)
		cmd.Dir = userlandDir
		cmd.Env = buildEnv()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("wasmbuild: building %s: %w\n%s", name, err, stderr.String())
		}
		// Modules are data, not host executables.
		if err := os.Chmod(filepath.Join(absOut, name+".wasm"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func buildEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOOS", "GOARCH", "GOFLAGS", "GOWASM", "CGO_ENABLED", "GOEXPERIMENT":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=", "GOWASM=", "GOEXPERIMENT=")
}
