package snapshot

import (
	"encoding/json"
	"testing"

	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
)

// FuzzRestore: whatever a manifest says, decoding and restoring it ends
// in an error or a tree within the destination's quota, never a panic.
func FuzzRestore(f *testing.F) {
	st, err := OpenDir(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	m, err := Capture(bg, st, "", nil, []Source{{"/", tree(f, "x")}})
	if err != nil {
		f.Fatal(err)
	}
	seed, _ := json.Marshal(m.Layers[0])
	f.Add(seed)
	f.Add([]byte(`{"mount":"/","entries":[{"p":".","m":16877},{"p":"a","m":16877},{"p":"a/b","h":"a"},{"p":"c","m":41471,"l":"/etc"}]}`))
	f.Add([]byte(`{"mount":"/","entries":[{"p":".","m":16877},{"p":"f","m":33188,"s":5,"b":"00"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var l Layer
		if json.Unmarshal(data, &l) != nil || len(l.Entries) > 1000 {
			return
		}
		q := vfs.NewQuota(1<<20, 200)
		_ = Restore(bg, st, &l, memfs.New(memfs.Options{Quota: q}))
		if b, maxB, n, maxN := q.Usage(); b > maxB || n > maxN {
			t.Fatalf("restore went past its quota: %d/%d bytes, %d/%d inodes", b, maxB, n, maxN)
		}
		_, _ = Decode(idOf(data), data)
	})
}
