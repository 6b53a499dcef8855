// Package wasm embeds secexec's own userland commands, compiled to WASI
// preview 1 modules (GOOS=wasip1 GOARCH=wasm): bash (also sh; a reactor
// module, see internal/wasm's prestart pool), grep (GNU grep 3.8
// compatible), jq (jq 1.7 command line over gojq), git (go-git), curl
// (also wget) and tools,
// one multi-call module for xxd, hexdump, file, tree, zip, unzip, bzip2,
// xz and patch (and their bunzip2/bzcat/unxz/xzcat forms) that picks the
// tool from argv[0]. Commands maps every command name to its module. The
// modules are built by "go generate ./userland" and checked by
// TestWasmUpToDate.
//
// All expect a WASI host that passes the working directory in the PWD
// environment variable (Go's wasip1 port resolves relative paths against
// it) and preopens the directories they may read.
package wasm

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/secexec/secexec/software"
	"github.com/secexec/secexec/userland/internal/wasmbuild"
)

//go:embed *.wasm
var modules embed.FS

// Names lists the embedded modules in sorted order.
func Names() []string {
	entries, _ := fs.ReadDir(modules, ".")
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".wasm"); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Module returns a copy of the named WASI module ("git", "grep", "jq" or
// "tools"; a module name, not an alias: see Commands); ok is false for an
// unknown name.
func Module(name string) (module []byte, ok bool) {
	if strings.ContainsAny(name, "/.") {
		return nil, false
	}
	b, err := modules.ReadFile(name + ".wasm")
	if err != nil {
		return nil, false
	}
	return b, true
}

// Modules returns every embedded module keyed by command name. Each call
// returns fresh copies, so callers may keep or modify them.
func Modules() map[string][]byte {
	m := make(map[string][]byte)
	for _, name := range Names() {
		b, _ := Module(name)
		m[name] = b
	}
	return m
}

// Commands maps every command name the embedded modules answer to onto
// the name of the module that implements it: each module under its own
// name and each alias of a multi-call module (xxd → tools). Register every
// entry to install the whole userland.
func Commands() map[string]string {
	m := make(map[string]string)
	for _, name := range Names() {
		m[name] = name
		for _, alias := range wasmbuild.Aliases[name] {
			m[alias] = name
		}
	}
	return m
}

// FS returns the modules as a read-only file system of NAME.wasm files.
func FS() fs.FS { return modules }

// Store is where Install adds the commands: a *software.Store.
type Store interface {
	Register(name string, wasm []byte) (software.Command, error)
	Alias(name, target string) (software.Command, error)
}

// Install registers every embedded command in store, aliases included.
// The published userland's shell (brush), which secexec's sh and bash
// hide, stays reachable as "brush" when its package is installed.
func Install(store Store) error {
	if _, err := store.Alias("brush", "sh"); err != nil && !errors.Is(err, software.ErrNotFound) {
		return fmt.Errorf("userland: brush: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(Commands())) {
		b, _ := Module(Commands()[name])
		if _, err := store.Register(name, b); err != nil {
			return fmt.Errorf("userland: registering %s: %w", name, err)
		}
	}
	return nil
}
