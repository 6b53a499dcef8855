package main

import (
	"testing"

	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
)

func TestMain(m *testing.M) { vmtest.Main(m) }

// BenchmarkShell measures sh -c in a VM: the shell's start-up, and a
// pipeline of a builtin into a program. brush, the shell it replaces, is
// still there as "brush" for comparison.
func BenchmarkShell(b *testing.B) {
	h := vmtest.NewHost(b, vmhost.Config{})
	for _, bc := range []struct {
		name string
		argv []string
		out  string
	}{
		{"sh_true", []string{"sh", "-c", "true"}, ""},
		{"sh_echo_wc", []string{"sh", "-c", "echo hello | wc -c"}, "6\n"},
		{"brush_true", []string{"brush", "-c", "true"}, ""},
		{"brush_echo_wc", []string{"brush", "-c", "echo hello | wc -c"}, "6\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			vmtest.Run(b, h, "", nil, bc.argv...)
			b.ResetTimer()
			for b.Loop() {
				r := vmtest.Run(b, h, "", nil, bc.argv...)
				if r.Exit.Code != 0 || r.Stdout != bc.out {
					b.Fatalf("%q: stdout %q stderr %q code %d", bc.argv, r.Stdout, r.Stderr, r.Exit.Code)
				}
			}
		})
	}
}
