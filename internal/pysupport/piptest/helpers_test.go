// Package piptest_test holds the tests of python3's pip and venv in the
// VM (internal/pysupport's _secexec_pip.py and _secexec_venv.py). They
// build wheels with host pip and install them from a loopback index, which
// takes minutes on a busy machine: in a package of their own they have a
// test binary, and a time-out, of their own.
package piptest_test

import (
	"testing"

	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
)

func TestMain(m *testing.M) { vmtest.Main(m) }

func newHost(t testing.TB, cfg vmhost.Config) *vmhost.Host { return vmtest.NewHost(t, cfg) }

type runResult struct {
	stdout, stderr string
	exit           *vmhost.Exit
}

// run runs argv in h with the real CPython for WASI and the real userland.
func run(t testing.TB, h *vmhost.Host, stdin string, argv ...string) runResult {
	t.Helper()
	r := vmtest.Run(t, h, stdin, nil, argv...)
	return runResult{stdout: r.Stdout, stderr: r.Stderr, exit: r.Exit}
}
