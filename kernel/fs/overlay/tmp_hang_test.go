package overlay

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"time"
)

func TestTmpHang(t *testing.T) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 6))
	deadline := time.Now().Add(100 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		prog := make([]byte, 3*(1+rng.IntN(60)))
		for j := range prog {
			prog[j] = byte(rng.Uint32())
		}
		tm := time.AfterFunc(5*time.Second, func() {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			fmt.Fprintf(os.Stderr, "HANG prog %x\n%s", prog, buf[:n])
			os.Exit(3)
		})
		runProg(t, prog)
		tm.Stop()
		if t.Failed() {
			t.Fatalf("prog %x", prog)
		}
	}
}
