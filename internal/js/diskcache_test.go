package js

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bigModules writes a CommonJS module and an ES module, each larger than
// diskMinSource, and returns the code that loads both and prints a sum
// only a correct compile of both gives.
func bigModules(v *testVM) string {
	var cjs, esm strings.Builder
	cjs.WriteString("let n = 0;\n")
	esm.WriteString("let n = 0;\n")
	for i := range 3000 {
		fmt.Fprintf(&cjs, "function c%d(x) { return x + %d; } n = c%d(n);\n", i, i%7, i)
		fmt.Fprintf(&esm, "function e%d(x) { return x + %d; } n = e%d(n);\n", i, i%5, i)
	}
	cjs.WriteString("module.exports = n;\n")
	esm.WriteString("export default n;\n")
	v.writeFile("/workspace/big.js", cjs.String())
	v.writeFile("/workspace/big.mjs", esm.String())
	return "import('/workspace/big.mjs').then((m) => console.log(require('/workspace/big.js') + m.default))"
}

// bigModulesWant is what bigModules' code prints.
func bigModulesWant() string {
	n := 0
	for i := range 3000 {
		n += i%7 + i%5
	}
	return fmt.Sprintln(n)
}

func diskEngine(t *testing.T, dir string, max int64) *Engine {
	t.Helper()
	e, err := NewEngine(context.Background(), Config{CodeCacheDir: dir, DiskCacheBytes: max, WarmIsolates: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// runBig runs bigModules' code in a VM of e, checks its output, and
// closes e so that its cache writes are done.
func runBig(t *testing.T, e *Engine) Stats {
	t.Helper()
	v := newVM(t, e)
	res := v.node(bigModules(v))
	if res.code != 0 || res.stdout != bigModulesWant() {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %q", res.code, res.stdout, res.stderr, bigModulesWant())
	}
	_ = e.Close()
	return e.Stats()
}

func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range ents {
		if !strings.HasPrefix(de.Name(), ".") {
			out = append(out, filepath.Join(dir, de.Name()))
		}
	}
	return out
}

// A second engine process (here: a second Engine on the same directory)
// takes the bootstrap's code cache, the big modules' code caches and the
// ES module's transform from disk, and V8 accepts the caches.
func TestDiskCodeCacheAcrossEngines(t *testing.T) {
	dir := t.TempDir()
	st1 := runBig(t, diskEngine(t, dir, 0))
	// The bootstrap, big.js, the transform of big.mjs and its code.
	if st1.DiskCache.Writes < 4 {
		t.Fatalf("first engine wrote %d entries, want at least 4 (%+v)", st1.DiskCache.Writes, st1.DiskCache)
	}
	st2 := runBig(t, diskEngine(t, dir, 0))
	if st2.DiskCache.Hits < 4 || st2.DiskCache.Rejected != 0 || st2.DiskCache.Damaged != 0 {
		t.Fatalf("second engine: %+v, want at least 4 hits, none rejected or damaged", st2.DiskCache)
	}
}

// A damaged entry (truncated, garbled, an empty file, an entry moved to
// another entry's name) is dropped and removed: the process compiles
// afresh and behaves the same; nothing crashes.
func TestDiskCodeCacheDamagedEntries(t *testing.T) {
	damage := map[string]func(name string, data []byte, other []byte) []byte{
		"truncated": func(_ string, d, _ []byte) []byte { return d[:len(d)/2] },
		"header":    func(_ string, d, _ []byte) []byte { return d[:diskHeader-1] },
		"empty":     func(_ string, _, _ []byte) []byte { return nil },
		"garbled":   func(_ string, d, _ []byte) []byte { d = bytes.Clone(d); d[len(d)-10] ^= 0x55; return d },
		"magic":     func(_ string, d, _ []byte) []byte { d = bytes.Clone(d); d[0] = 'X'; return d },
		"huge": func(_ string, d, _ []byte) []byte {
			d = bytes.Clone(d)
			copy(d[len(diskMagic)+64:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
			return d
		},
		"trailing":   func(_ string, d, _ []byte) []byte { return append(bytes.Clone(d), 0) },
		"misplaced":  func(_ string, _, o []byte) []byte { return o },
		"random":     func(_ string, _, _ []byte) []byte { return bytes.Repeat([]byte("\x17garbage"), 5000) },
		"headerOnly": func(_ string, d, _ []byte) []byte { return d[:diskHeader] },
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			runBig(t, diskEngine(t, dir, 0))
			files := cacheFiles(t, dir)
			if len(files) < 2 {
				t.Fatalf("%d entries written", len(files))
			}
			orig := map[string][]byte{}
			for _, p := range files {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				orig[p] = b
			}
			for i, p := range files {
				other := orig[files[(i+1)%len(files)]]
				if err := os.WriteFile(p, f(p, orig[p], other), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			st := runBig(t, diskEngine(t, dir, 0))
			if st.DiskCache.Hits != 0 || st.DiskCache.Damaged < int64(len(files)) {
				t.Fatalf("after damage: %+v, want no hits and %d damaged", st.DiskCache, len(files))
			}
			// The engine wrote good entries again.
			st = runBig(t, diskEngine(t, dir, 0))
			if st.DiskCache.Hits < 4 || st.DiskCache.Damaged != 0 {
				t.Fatalf("after rewrite: %+v", st.DiskCache)
			}
		})
	}
}

// An entry whose framing is intact but whose code cache is not V8's for
// that source (what an entry made by another V8, or forged, would be) is
// refused by V8: the process compiles the source and runs correctly.
func TestDiskCodeCacheForeignPayload(t *testing.T) {
	dir := t.TempDir()
	e := diskEngine(t, dir, 0)
	runBig(t, e)
	// Rewrite every entry with a well-framed, wrong payload: V8 refuses
	// the code caches; the transform's and the bootstrap's fail their
	// own decoding.
	forged := 0
	for _, p := range cacheFiles(t, dir) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		k := [32]byte(b[len(diskMagic)+32 : len(diskMagic)+64])
		payload := bytes.Repeat([]byte{0xa5}, len(b)-diskHeader)
		if err := e.disk.write(k, payload); err != nil {
			t.Fatal(err)
		}
		forged++
	}
	if forged == 0 {
		t.Fatal("nothing forged")
	}
	st := runBig(t, diskEngine(t, dir, 0))
	if st.DiskCache.Rejected == 0 || st.DiskCache.Damaged != 0 {
		t.Fatalf("forged payloads: %+v, want some rejected by V8", st.DiskCache)
	}
}

// The directory stays within its bound: older entries are removed, and
// temporary files a crashed writer left are cleared.
func TestDiskCacheBound(t *testing.T) {
	dir := t.TempDir()
	const max = 1 << 20
	c := newDiskCache(dir, max, nil, slog.New(slog.DiscardHandler))
	if c == nil {
		t.Fatal("no disk cache")
	}
	if err := os.WriteFile(filepath.Join(dir, ".tmp-left"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := mustAge(t, filepath.Join(dir, ".tmp-left"))
	for i := range 40 {
		c.put(diskCode, fmt.Sprint("key", i), bytes.Repeat([]byte{byte(i)}, 100<<10))
		c.wait()
	}
	if total := dirBytes(t, dir); total > max {
		t.Fatalf("cache holds %d bytes, bound %d", total, int64(max))
	}
	if _, ok := c.get(diskCode, "key39"); !ok {
		t.Fatal("newest entry evicted")
	}
	if _, ok := c.get(diskCode, "key0"); ok {
		t.Fatal("oldest entry kept past the bound")
	}
	if _, err := os.Stat(old); err == nil {
		t.Fatal("left-over temporary file kept")
	}
	// Two engine processes writing to one directory: each counts the
	// other's entries again after max/8 bytes of its own.
	c2 := newDiskCache(dir, max, nil, slog.New(slog.DiscardHandler))
	for i := range 40 {
		for j, cc := range []*diskCache{c, c2} {
			cc.put(diskCode, fmt.Sprint("two", i, j), bytes.Repeat([]byte{byte(i)}, 100<<10))
			cc.wait()
		}
	}
	if got := dirBytes(t, dir); got > max*3/2 {
		t.Fatalf("two writers left %d bytes, bound %d", got, max)
	}
	// A payload larger than an entry may be is not written.
	before := c.stats().Writes
	c.put(diskCode, "huge", make([]byte, maxDiskEntry+1))
	c.wait()
	if c.stats().Writes != before {
		t.Fatal("oversized entry written")
	}
}

// mustAge sets name's times past diskTempAge and returns name.
func mustAge(t *testing.T, name string) string {
	t.Helper()
	old := time.Now().Add(-2 * diskTempAge)
	if err := os.Chtimes(name, old, old); err != nil {
		t.Fatal(err)
	}
	return name
}

// dirBytes is the size of the files in dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			total += info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}
