// Package wasm embeds secexec's own userland commands, compiled to WASI
// preview 1 modules (GOOS=wasip1 GOARCH=wasm): grep (GNU grep 3.8
// compatible), jq (jq 1.7 command line over gojq) and git (go-git). The modules are
// built by "go generate ./userland" and checked by TestWasmUpToDate.
//
// Both expect a WASI host that passes the working directory in the PWD
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
)

//go:embed *.wasm
var modules embed.FS

// Names lists the embedded commands in sorted order.
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

// aliases are further command names of an embedded module.
var aliases = map[string]string{"sh": "bash"}

// Commands maps every command name the embedded modules provide to the
// module that implements it: each module under its own name, plus
// aliases (sh is bash).
func Commands() map[string]string {
	m := make(map[string]string)
	for _, name := range Names() {
		m[name] = name
	}
	for alias, name := range aliases {
		if _, ok := m[name]; ok {
			m[alias] = name
		}
	}
	return m
}

// Module returns a copy of the named command's WASI module ("git",
// "grep" or "jq"); ok is false for an unknown name.
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
