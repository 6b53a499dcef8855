package tzdata

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/secexec/secexec/kernel/vfs"
)

func TestEnsureAndLayer(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	if _, err := Layer(ctx, cache); !errors.Is(err, ErrNoData) {
		t.Fatalf("Layer of an empty cache = %v, want ErrNoData", err)
	}
	if err := Ensure(ctx, cache); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(Path(cache))
	if err != nil {
		t.Fatal(err)
	}
	if err := Ensure(ctx, cache); err != nil { // already there: nothing to do
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(Path(cache)); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("a second Ensure rewrote the copy")
	}
	fsys, err := Layer(ctx, cache)
	if err != nil {
		t.Fatal(err)
	}
	v, err := vfs.New(ctx, fsys, vfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := &vfs.Caller{Cwd: "/"}
	for _, p := range []string{Dir + "/Europe/Paris", "/etc/zoneinfo/America/New_York", Dir + "/UTC"} {
		f, err := v.Open(ctx, c, p, vfs.O_RDONLY, 0)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		buf := make([]byte, 4)
		if n, err := f.Read(ctx, buf); err != nil || n != 4 || string(buf) != "TZif" {
			t.Errorf("%s: read %q %v", p, buf[:n], err)
		}
		f.DecRef()
	}
}

func zipOf(t testing.TB, files map[string][]byte) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for name, data := range files {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestParseRefusesWhatIsNotAZoneDatabase(t *testing.T) {
	for name, files := range map[string]map[string][]byte{
		"escaping name": {"../etc/passwd": []byte("TZif2")},
		"absolute name": {"/etc/x": []byte("TZif2")},
		"not TZif":      {"Europe/X": []byte("#!/bin/sh\n")},
		"too large":     {"Europe/Big": append([]byte("TZif"), make([]byte, maxZoneBytes)...)},
		"empty":         {},
	} {
		if _, err := parse(zipOf(t, files)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if zones, err := parse(zipOf(t, map[string][]byte{"Etc/X": []byte("TZif2...")})); err != nil || len(zones) != 1 {
		t.Errorf("a good zip: %v %v", zones, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("PK\x05\x06" + string(make([]byte, 18))))
	f.Fuzz(func(t *testing.T, b []byte) {
		zones, err := parse(b)
		if err != nil {
			return
		}
		for _, z := range zones {
			if len(z.data) > maxZoneBytes || !bytes.HasPrefix(z.data, []byte("TZif")) {
				t.Fatalf("zone %q accepted", z.name)
			}
		}
	})
}
