package wasm_test

import (
	"context"
	"testing"

	"github.com/secexec/secexec/internal/vm"
)

// BenchmarkExec measures warm execs on one VM: a plain argv is spawned
// directly (as the Exec layer does), a pipeline through sh -c.
func BenchmarkExec(b *testing.B) {
	v := newVM(b, vm.Config{})
	ctx := context.Background()
	if r := v.sh(ctx, "mkdir -p /tmp/empty"); r.code != 0 {
		b.Fatalf("setup: %q", r.stderr)
	}
	for _, bc := range []struct {
		name string
		argv []string
		out  string
	}{
		{"true", []string{"true"}, ""},
		{"pwd", []string{"pwd"}, "/workspace\n"},
		{"printf", []string{"printf", ""}, ""},
		{"date", []string{"date"}, ""},
		{"ls_empty", []string{"ls", "/tmp/empty"}, ""},
		{"echo_hello_wc", []string{"sh", "-c", "echo hello | wc -c"}, "6\n"},
		{"sh_true", []string{"sh", "-c", "true"}, ""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			// Warm: the module is compiled and cached before timing.
			v.exec(ctx, bc.argv, runOpts{})
			b.ResetTimer()
			for b.Loop() {
				r := v.exec(ctx, bc.argv, runOpts{})
				if r.code != 0 || (bc.out != "" && string(r.stdout) != bc.out) {
					b.Fatalf("%q: stdout %q stderr %q code %d", bc.argv, r.stdout, r.stderr, r.code)
				}
			}
		})
	}
}
