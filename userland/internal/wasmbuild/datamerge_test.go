package wasmbuild

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/secexec/secexec/internal/wasmbin"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// image applies a module's data segments as instantiation would.
func image(t testing.TB, module []byte) ([]byte, int) {
	t.Helper()
	i := 8
	for i < len(module) {
		id := module[i]
		size, n, err := wasmbin.ReadULEB(module[i+1:])
		if err != nil {
			t.Fatal(err)
		}
		body := module[i+1+n : i+1+n+int(size)]
		if id == 11 {
			segs, err := parseData(body)
			if err != nil {
				t.Fatal(err)
			}
			var img []byte
			for _, s := range segs {
				if end := int(s.offset) + len(s.data); end > len(img) {
					img = append(img, make([]byte, end-len(img))...)
				}
				copy(img[s.offset:], s.data)
			}
			return img, len(segs)
		}
		i += 1 + n + int(size)
	}
	return nil, 0
}

func buildHello(t *testing.T) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "hello.wasm")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./testdata/hello")
	cmd.Env = buildEnv()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func runWASI(t *testing.T, module []byte) string {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	var out bytes.Buffer
	_, err := r.InstantiateWithConfig(ctx, module, wazero.NewModuleConfig().WithStdout(&out).WithArgs("hello", "x"))
	if err != nil && !isExit0(err) {
		t.Fatalf("run: %v", err)
	}
	return out.String()
}

func isExit0(err error) bool {
	type exitCoder interface{ ExitCode() uint32 }
	var ec exitCoder
	return errors.As(err, &ec) && ec.ExitCode() == 0
}

// A Go module's memory image and behaviour survive the merge, with far
// fewer segments.
func TestMergeDataSegmentsGoModule(t *testing.T) {
	orig := buildHello(t)
	merged, err := MergeDataSegments(orig, dataGap)
	if err != nil {
		t.Fatal(err)
	}
	imgA, nA := image(t, orig)
	imgB, nB := image(t, merged)
	if !bytes.Equal(imgA, imgB) {
		t.Fatal("memory image changed")
	}
	if nA < 1000 || nB > 50 {
		t.Fatalf("segments %d → %d, want thousands → a few", nA, nB)
	}
	if a, b := runWASI(t, orig), runWASI(t, merged); a != b || a != "alpha,beta,delta,gamma true 2\n" {
		t.Fatalf("output %q, merged %q", a, b)
	}
	again, err := MergeDataSegments(merged, dataGap)
	if err != nil || !bytes.Equal(again, merged) {
		t.Fatalf("merging twice changed the module (%v)", err)
	}
}

// Overlapping segments keep instantiation's rule: the later one wins.
func TestMergeSegmentsOverlap(t *testing.T) {
	segs, _ := mergeSegments([]dataSegment{{10, []byte("aaaa")}, {12, []byte("bb")}, {200, []byte("c")}}, 4)
	if len(segs) != 2 || segs[0].offset != 10 || string(segs[0].data) != "aabb" || segs[1].offset != 200 {
		t.Fatalf("%+v", segs)
	}
}

func FuzzMergeDataSegments(f *testing.F) {
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x0b\x07\x01\x00\x41\x00\x0b\x01x"))
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x0b\x09\x02\x00\x41\x08\x0b\x01x\x01"))
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x0c\x01\x01\x0b\x07\x01\x00\x41\x7f\x0b\x01x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := MergeDataSegments(b, 8)
		if err != nil {
			return
		}
		if _, err := MergeDataSegments(m, 8); err != nil {
			t.Fatalf("merged output does not parse: %v", err)
		}
	})
}
