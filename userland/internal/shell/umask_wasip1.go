//go:build wasip1

package shell

// setUmask keeps the umask in the shell: the host applies the process
// umask it got at spawn, and the shell passes its own to children by
// environment-free inheritance only through the host (not yet exposed).
func setUmask(m int) {}
