package snapshot

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
)

// BenchmarkCapture saves 640 files of 4 KiB (text-like) into an empty
// directory store: the cost of a first snapshot.
func BenchmarkCapture(b *testing.B) {
	fs := memfs.New(memfs.Options{})
	v, _ := vfs.New(bg, fs, vfs.Options{})
	c := &vfs.Caller{Cwd: "/"}
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"function", "return", "var", "module", "exports", "require", "this", "{", "}", "(", ")", ";\n"}
	for d := range 64 {
		_ = v.Mkdir(bg, c, fmt.Sprint("/d", d), 0o755)
		for i := range 10 {
			var data []byte
			for len(data) < 4096 {
				data = append(data, words[r.IntN(len(words))]...)
				data = append(data, ' ')
			}
			f, err := v.Open(bg, c, fmt.Sprintf("/d%d/f%d", d, i), vfs.O_WRONLY|vfs.O_CREAT, 0o644)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = f.Write(bg, data)
			f.DecRef()
		}
	}
	for b.Loop() {
		st, err := OpenDir(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Capture(bg, st, "", nil, []Source{{"/", fs}}); err != nil {
			b.Fatal(err)
		}
	}
}
