package overlay

import (
	"fmt"
	"strings"
	"testing"
)

// benchEnv is a merged directory of 1000 lower and 100 upper entries.
func benchEnv(b *testing.B) *env {
	var up, low strings.Builder
	up.WriteString("d /d\n")
	low.WriteString("d /d\n")
	for i := range 100 {
		fmt.Fprintf(&up, "f /d/u%d u\n", i)
	}
	for i := range 1000 {
		fmt.Fprintf(&low, "f /d/l%d l\n", i)
	}
	return newEnv(b, 0, spec(up.String()), spec(low.String()))
}

func BenchmarkLookupCached(b *testing.B) {
	e := benchEnv(b)
	root, _ := e.ov.Root(ctx())
	d, _ := root.Lookup(ctx(), "d")
	if _, err := d.Lookup(ctx(), "l500"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := d.Lookup(ctx(), "l500"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLookupMiss(b *testing.B) {
	e := benchEnv(b)
	root, _ := e.ov.Root(ctx())
	d, _ := root.Lookup(ctx(), "d")
	for b.Loop() {
		if _, err := d.Lookup(ctx(), "nope"); err == nil {
			b.Fatal("found")
		}
	}
}

func BenchmarkReadDirMerged(b *testing.B) {
	e := benchEnv(b)
	root, _ := e.ov.Root(ctx())
	d, _ := root.Lookup(ctx(), "d")
	for b.Loop() {
		var cookie uint64
		n := 0
		for {
			ents, err := d.ReadDir(ctx(), cookie, 128)
			if err != nil {
				b.Fatal(err)
			}
			if len(ents) == 0 {
				break
			}
			n += len(ents)
			cookie = ents[len(ents)-1].Next
		}
		if n != 1100 {
			b.Fatalf("listed %d", n)
		}
	}
}

func BenchmarkCopyUpSmallFile(b *testing.B) {
	e := benchEnv(b)
	i := 0
	for b.Loop() {
		if i == 1000 {
			b.StopTimer()
			e = benchEnv(b)
			i = 0
			b.StartTimer()
		}
		e.must(e.write(fmt.Sprintf("/d/l%d", i), 0, "x"))
		i++
	}
}
