package js

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/vfs"
)

// moduleTree writes n modules of the given extension under dir, each
// requiring (or importing) the next two of a binary tree, and an entry
// that loads the root.
func moduleTree(v *testVM, dir, ext string, n int, esm bool) {
	mkdir(v.t, v, dir)
	for i := 0; i < n; i++ {
		var b strings.Builder
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c >= n {
				continue
			}
			if esm {
				fmt.Fprintf(&b, "import { v as v%d } from './m%d%s';\n", c, c, ext)
			} else {
				fmt.Fprintf(&b, "const v%d = require('./m%d%s').v;\n", c, c, ext)
			}
		}
		// Some body, so that compiling is part of the cost.
		fmt.Fprintf(&b, "function f%d(x) { let s = 0; for (let j = 0; j < x; j++) s += j * %d; return s; }\n", i, i)
		if esm {
			fmt.Fprintf(&b, "export const v = f%d(3);\n", i)
		} else {
			fmt.Fprintf(&b, "exports.v = f%d(3);\n", i)
		}
		v.writeFile(fmt.Sprintf("%s/m%d%s", dir, i, ext), b.String())
	}
}

// benchLoad measures a node process that loads a tree of 255 modules:
// spawn, load (resolution, reading, the code cache, the module
// wrappers), exit.
func benchLoad(b *testing.B, ext string, esm bool) {
	v := newVM(b, nil)
	moduleTree(v, "/workspace/tree", ext, 255, esm)
	k := v.vm.Kernel
	run := func() {
		p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{
			Argv: []string{"node", "/workspace/tree/m0" + ext}, Env: []string{"PATH=/usr/bin"}, Cwd: "/workspace",
			Files: []vfs.File{nil, nil, nil},
		})
		if err != nil {
			b.Fatal(err)
		}
		st, err := p.HostWait(context.Background())
		if err != nil || st.ShellCode() != 0 {
			b.Fatalf("%+v %v", st, err)
		}
	}
	run() // the code cache and transform cache are warm from here on
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		run()
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	// The machine is shared: the fastest and the median runs say more
	// than the mean.
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[0].Microseconds()), "min-µs")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
}

// Plain CommonJS loading, which the ES module loader must not slow down.
func BenchmarkLoadCJS(b *testing.B)  { benchLoad(b, ".js", false) }
func BenchmarkLoadCJS2(b *testing.B) { benchLoad(b, ".cjs", false) }

// The same tree as ES modules.
func BenchmarkLoadESM(b *testing.B) { benchLoad(b, ".mjs", true) }
