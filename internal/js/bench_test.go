package js

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// BenchmarkNodeEmpty measures node -e "" back to back: spawn, isolate
// (from the warm pool while it keeps up), run, exit, through the kernel.
func BenchmarkNodeEmpty(b *testing.B) { benchNodeEmpty(b, 0) }

// BenchmarkNodeEmptyPaced leaves 20 ms between execs (not timed), so the
// warm pool refills: the latency of a warm exec.
func BenchmarkNodeEmptyPaced(b *testing.B) { benchNodeEmpty(b, 20*time.Millisecond) }

func benchNodeEmpty(b *testing.B, gap time.Duration) {
	v := newVM(b, nil)
	k := v.vm.Kernel
	spawn := func() {
		p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"node", "-e", ""}, Env: []string{"PATH=/usr/bin"}, Files: []vfs.File{nil, nil, nil}})
		if err != nil {
			b.Fatal(err)
		}
		st, err := p.HostWait(context.Background())
		if err != nil || st.ShellCode() != 0 {
			b.Fatalf("%+v %v", st, err)
		}
	}
	spawn() // warm the code cache
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if gap > 0 {
			b.StopTimer()
			time.Sleep(gap)
			b.StartTimer()
		}
		t0 := time.Now()
		spawn()
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), "p95-µs")
}
