//go:build !linux

package server

// Harden does nothing outside Linux: the process-level restrictions it
// applies there (no_new_privs, seccomp, non-dumpable) have no portable
// equivalent. The engine process still isolates crashes.
func Harden(keepFD int) error { return nil }
