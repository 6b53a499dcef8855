// Package wasmbuild compiles secexec's userland commands to WASI modules
// reproducibly: the same sources and Go toolchain give byte-identical
// output. Set-up runs it once per source (userland/wasm.Ensure); nothing
// it builds is ever committed.
package wasmbuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/secexec/secexec/internal/wasmbin"
)

// Commands are the userland programs, each a package main in a directory
// of the same name under the userland directory.
var Commands = []string{"bash", "curl", "git", "grep", "jq", "make", "tools"}

// Aliases are the command names a module answers to besides its own.
// One module for many small tools keeps the embedded size down: the Go
// runtime and standard library are paid for once, and the module picks
// the tool from the base name of argv[0]. bash is also sh (in POSIX mode).
var Aliases = map[string][]string{
	"bash": {"sh"},
	"curl": {"wget"},
	"tools": {"bunzip2", "bzcat", "bzip2", "clear", "ex", "file", "hexdump", "hostname", "less", "more", "patch", "ps", "stty", "tput", "tree",
		"uname", "unxz", "unzip", "vi", "view", "vim", "xxd", "xz", "xzcat", "zip"},
}

// reactors are the commands built as WASI reactors (-buildmode=c-shared):
// they export _initialize and secexec_main instead of _start, so that
// secexec's engine can run their start-up before a process needs them
// (internal/wasm's prestart pool) and start later instances from a
// snapshot of an initialised one. Their secexec_main is hostproc.Run.
// Every Go command is one: the Go runtime's and packages' initialisation
// was most of a short run (jq -n 1: ~6 ms of ~8).
var reactors = map[string]bool{"bash": true, "curl": true, "git": true, "grep": true, "jq": true, "make": true, "tools": true}

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
		args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid="}
		if reactors[name] {
			args = append(args, "-buildmode=c-shared")
		}
		args = append(args, "-o", filepath.Join(absOut, name+".wasm"), "./"+name)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = userlandDir
		cmd.Env = buildEnv()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("wasmbuild: building %s: %w\n%s", name, err, stderr.String())
		}
		if err := mergeFile(filepath.Join(absOut, name+".wasm")); err != nil {
			return fmt.Errorf("wasmbuild: %s: %w", name, err)
		}
		if reactors[name] {
			// The engine starts a reactor's later instances from a
			// snapshot of its first initialised one (internal/wasm).
			if err := rewriteFile(filepath.Join(absOut, name+".wasm"), wasmbin.ExportGlobals); err != nil {
				return fmt.Errorf("wasmbuild: %s: %w", name, err)
			}
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

// dataGap is the longest run of zero bytes MergeDataSegments writes out
// to join two segments: with 64, Go modules keep about 15 segments and
// grow by under 1 MiB.
const dataGap = 64

// mergeFile merges a built module's data segments in place.
func mergeFile(path string) error {
	return rewriteFile(path, func(b []byte) ([]byte, error) {
		m, err := MergeDataSegments(b, dataGap)
		if errors.Is(err, ErrUnsupportedData) {
			return b, nil
		}
		return m, err
	})
}

// rewriteFile replaces the module at path with f's rewrite of it.
func rewriteFile(path string, f func([]byte) ([]byte, error)) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	m, err := f(b)
	if err != nil {
		return err
	}
	return os.WriteFile(path, m, 0o644)
}
