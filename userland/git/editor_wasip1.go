//go:build wasip1

package main

import (
	"os"

	"github.com/secexec/secexec/userland/internal/hostproc"
)

// runEditor runs the editor as a VM process on git's standard
// descriptors and waits for it.
func runEditor(argv []string) (int, error) {
	pid, err := hostproc.Spawn(argv[0], argv, hostproc.Attr{Env: os.Environ()})
	if err != nil {
		return 0, err
	}
	_, st, err := hostproc.Wait(pid, false)
	if err != nil {
		return 0, err
	}
	return st.ExitCode(), nil
}
