//go:build wasip1

package shell

import "github.com/secexec/secexec/userland/internal/hostproc"

// setUmask sets the process umask, which the host applies to files the
// shell creates and passes on to its children.
func setUmask(m int) { _, _ = hostproc.Umask(m, true) }

// getUmask reads the process umask.
func getUmask() int {
	m, err := hostproc.Umask(0, false)
	if err != nil {
		return 0o022
	}
	return m
}
