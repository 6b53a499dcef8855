package aospkg_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/secexec/secexec/software/aospkg"
	"github.com/secexec/secexec/software/internal/aospkgtest"
)

// fuzzSeeds are valid containers of each shape plus a few broken ones. The
// same inputs are stored in testdata/fuzz/FuzzOpen so the corpus survives
// without this code.
func fuzzSeeds() [][]byte {
	minimal := aospkg.Manifest{Name: "m", Version: "0", Commands: aospkgtest.Commands("a")}
	v2 := aospkg.Manifest{Schema: 2, Name: "v2", Version: "2", Commands: aospkgtest.Commands("b")}
	valid := aospkgtest.Build(fullManifest(), demoFiles)
	return [][]byte{
		valid,
		aospkgtest.Build(minimal, []aospkgtest.File{{Path: "/bin/a", Data: []byte("\x00asm\x01\x00\x00\x00")}}),
		aospkgtest.Build(v2, []aospkgtest.File{{Path: "/bin/b", Data: []byte("b")}}),
		aospkgtest.Build(minimal, nil),
		withEntries(eRoot, eBin, eFile),
		valid[:40],
		withEntries(eRoot, eFile),
		withManifest(manifestChunk("x", env("K", "1", "K", "2"), nil)),
		{},
	}
}

func FuzzOpen(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := aospkg.Open(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			var fe *aospkg.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error is not a *FormatError: %v", err)
			}
			if fe.Offset < 0 || fe.Offset > int64(len(data)) {
				t.Fatalf("offset %d outside input of %d bytes", fe.Offset, len(data))
			}
			return
		}
		checkInvariants(t, p)

		// Re-encoding what was decoded must give a container that decodes
		// to the same values.
		m, entries := p.Manifest(), p.Entries()
		again := aospkgtest.Container(aospkgtest.EncodeManifest(m), aospkgtest.EncodeIndex(entries), data[p.MountBase():])
		q, err := aospkg.Open(bytes.NewReader(again), int64(len(again)))
		if err != nil {
			t.Fatalf("re-encoded container: %v", err)
		}
		if !reflect.DeepEqual(q.Manifest(), m) || !reflect.DeepEqual(q.Entries(), entries) {
			t.Fatal("re-encoded container decodes differently")
		}
	})
}

func checkInvariants(t *testing.T, p *aospkg.Package) {
	entries := p.Entries()
	if len(entries) == 0 || entries[0].Path != "/" || entries[0].Kind != aospkg.KindDir {
		t.Fatalf("index does not start with the root directory: %+v", entries)
	}
	children := 0
	for i, e := range entries {
		if i > 0 && entries[i-1].Path >= e.Path {
			t.Fatalf("index not strictly sorted at %q", e.Path)
		}
		got, ok := p.Lookup(e.Path)
		if !ok || !reflect.DeepEqual(got, e) {
			t.Fatalf("Lookup(%q) = %+v, %v", e.Path, got, ok)
		}
		switch e.Kind {
		case aospkg.KindFile:
			b, err := p.ReadFile(e.Path)
			if err != nil || uint64(len(b)) != e.Size {
				t.Fatalf("ReadFile(%q) = %d bytes, %v; want %d", e.Path, len(b), err, e.Size)
			}
		case aospkg.KindDir:
			ents, err := p.ReadDir(e.Path)
			if err != nil {
				t.Fatalf("ReadDir(%q): %v", e.Path, err)
			}
			children += len(ents)
		case aospkg.KindSymlink:
			if e.LinkTarget == "" {
				t.Fatalf("symlink %q without target", e.Path)
			}
		}
	}
	// Every entry but the root is the child of exactly one directory.
	if children != len(entries)-1 {
		t.Fatalf("directories list %d children, index has %d non-root entries", children, len(entries)-1)
	}
}
