// Package hostnode runs the host's node for tests that use it as the
// oracle of Node's behaviour (OpenSSL's encodings and arithmetic).
package hostnode

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// Run runs script (node -e) with stdin and returns its stdout; it fails
// t when node is missing or the script fails.
func Run(t testing.TB, script, stdin string) []byte {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("this test needs node on the host (.ci/run installs it)")
	}
	cmd := exec.Command(node, "-e", script)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("host node: %v\n%s", err, stderr.String())
	}
	return out
}
