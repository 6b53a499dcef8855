//go:build !wasip1

package netconn

// RestartInsecure is a no-op outside the sandbox, where Options.Insecure
// takes effect directly.
func RestartInsecure() error { return nil }
