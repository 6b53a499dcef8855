package shell

import (
	"os"
	"testing"
)

// BenchmarkRun measures the interpreter's own work for sh -c on the host,
// where allocations and CPU stand in for its cost compiled to WebAssembly
// (where every allocation and copy is several times dearer). The pipeline
// cases spawn a real wc (and true), so the time includes a fork; the
// allocation counts are the shell's.
func BenchmarkRun(b *testing.B) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	env := []string{"HOME=/home/user", "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "USER=user", "PWD=/"}
	for _, bc := range []struct{ name, src string }{
		{"true", "true"},
		{"echo_pwd", "echo hello; pwd"},
		{"echo_read", "echo hello | read x"},
		{"echo_wc", "echo hello | wc -c"},
		{"wc", "wc -c /dev/null"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			sys := NewSystem()
			b.ReportAllocs()
			for b.Loop() {
				sh := New("sh", sys, env, "/")
				sh.CommandMode = true
				sh.Stdio(null, null, null)
				sh.SetArgs("sh", nil)
				if st := sh.RunSource(bc.src); st != 0 {
					b.Fatalf("%q: status %d", bc.src, st)
				}
			}
		})
	}
}

// BenchmarkParse measures parsing a -c string (the parser is reused).
func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		parseBash("echo hello | wc -c")
	}
}
