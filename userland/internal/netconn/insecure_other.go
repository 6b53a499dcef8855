//go:build !wasip1

package netconn

// Restart is a no-op outside the sandbox, where Options.Insecure takes
// effect directly.
func Restart(insecure bool) error { return nil }
