// Package testnet holds helpers for tests of the network stack that
// check the host process itself.
package testnet

import (
	"os"
	"strings"
	"testing"
)

// SocketFDs counts the test process's socket descriptors, so a test can
// show that everything it opened on the host was closed. Pipes are left
// out: io.Copy splices through pipes that Go pools and frees only at
// garbage collection.
func SocketFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("counting descriptors: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}
