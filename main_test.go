package secexec_test

import (
	"os"
	"testing"

	"github.com/secexec/secexec"
)

// TestMain lets this test binary serve as the engine process of the VMs
// its tests create (they run in engine processes by default).
func TestMain(m *testing.M) {
	if secexec.IsEngine() {
		secexec.EngineMainForTest()
	}
	os.Exit(m.Run())
}
