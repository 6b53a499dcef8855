package wasmbuild

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/secexec/secexec/internal/wasmbin"
)

// A Go module keeps its behaviour with its globals exported, and exports
// the globals Go's wasm port keeps its registers in.
func TestExportGlobalsGoModule(t *testing.T) {
	orig := buildHello(t)
	out, err := wasmbin.ExportGlobals(orig)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := runWASI(t, orig), runWASI(t, out); a != b || a != "alpha,beta,delta,gamma true 2\n" {
		t.Fatalf("output %q, with exported globals %q", a, b)
	}
	n := bytes.Count(out, []byte(wasmbin.GlobalExportPrefix))
	if n < 2 {
		t.Fatalf("%d globals exported from a Go module, want SP and g at least", n)
	}
	if !bytes.Contains(out, []byte(wasmbin.GlobalExportPrefix+strconv.Itoa(n-1))) {
		t.Fatalf("export names are not numbered 0..%d", n-1)
	}
}
