// Package tzdata gives VMs the IANA time zone database at
// /usr/share/zoneinfo, where CPython's zoneinfo, Go programs
// (time.LoadLocation) and the C library look for it, so that TZ and zone
// names work in the guest as on a host with Debian's tzdata.
//
// The data is the Go toolchain's copy (GOROOT/lib/time/zoneinfo.zip: one
// TZif file per zone, the format all of those readers take), which set-up
// copies into the cache once, so nothing third-party is committed and the
// engine, which never runs the go command, reads it from there. A cache
// without it (set-up without Go) gives VMs no zone data, as before.
package tzdata

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/secexec/secexec/internal/layerfs"
	"github.com/secexec/secexec/kernel/vfs"
)

// Dir is where the zones appear in a VM.
const Dir = "/usr/share/zoneinfo"

// cacheName is the copy's name in the cache root.
const cacheName = "tzdata/zoneinfo.zip"

// Bounds on what is read from the zip: Go's holds about 600 zones in
// 400 KB; anything far larger is not that file.
const (
	maxZipBytes  = 16 << 20
	maxZones     = 4096
	maxZoneBytes = 64 << 10
)

// ErrNoData is matched when no time zone database could be found.
var ErrNoData = errors.New("tzdata: no time zone database")

// Path returns where the database is kept under the cache root.
func Path(cacheDir string) string { return filepath.Join(cacheDir, filepath.FromSlash(cacheName)) }

// Ensure copies the Go toolchain's zoneinfo.zip into the cache unless it
// is there. It returns ErrNoData (and copies nothing) when the toolchain
// has none.
func Ensure(ctx context.Context, cacheDir string) error {
	dst := Path(cacheDir)
	if fi, err := os.Stat(dst); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	src, err := goZip(ctx)
	if err != nil {
		return err
	}
	b, err := readBounded(src)
	if err != nil {
		return err
	}
	if _, err := parse(b); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".zoneinfo-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// goZip finds the toolchain's zoneinfo.zip.
func goZip(ctx context.Context) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("%w: the go command was not found", ErrNoData)
	}
	out, err := exec.CommandContext(ctx, goBin, "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("%w: go env GOROOT: %v", ErrNoData, err)
	}
	p := filepath.Join(strings.TrimSpace(string(out)), "lib", "time", "zoneinfo.zip")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoData, err)
	}
	return p, nil
}

func readBounded(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxZipBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxZipBytes {
		return nil, fmt.Errorf("tzdata: %s is over %d bytes", p, maxZipBytes)
	}
	return b, nil
}

// zone is one TZif file of the database.
type zone struct {
	name string // "Europe/Paris"
	data []byte
}

// parse reads the zones of a zoneinfo.zip, checking each name and that
// each file is TZif.
func parse(b []byte) ([]zone, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("tzdata: %w", err)
	}
	if len(zr.File) > maxZones {
		return nil, fmt.Errorf("tzdata: %d zones", len(zr.File))
	}
	var zones []zone
	for _, f := range zr.File {
		name := f.Name
		if f.FileInfo().IsDir() {
			continue
		}
		if !path.IsAbs("/"+name) || path.Clean("/"+name) != "/"+name || strings.Contains(name, "..") {
			return nil, fmt.Errorf("tzdata: bad zone name %q", name)
		}
		if f.UncompressedSize64 > maxZoneBytes {
			return nil, fmt.Errorf("tzdata: zone %s is %d bytes", name, f.UncompressedSize64)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("tzdata: %s: %w", name, err)
		}
		data, err := io.ReadAll(io.LimitReader(rc, maxZoneBytes+1))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("tzdata: %s: %w", name, err)
		}
		if len(data) > maxZoneBytes || !bytes.HasPrefix(data, []byte("TZif")) {
			return nil, fmt.Errorf("tzdata: %s is not a TZif file", name)
		}
		zones = append(zones, zone{name: name, data: data})
	}
	if len(zones) == 0 {
		return nil, fmt.Errorf("%w: the zip holds no zones", ErrNoData)
	}
	return zones, nil
}

// Layer returns a read-only filesystem with the cached database at Dir,
// or ErrNoData when the cache has none.
func Layer(ctx context.Context, cacheDir string) (vfs.FileSystem, error) {
	b, err := readBounded(Path(cacheDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s", ErrNoData, cacheDir)
	}
	if err != nil {
		return nil, err
	}
	zones, err := parse(b)
	if err != nil {
		return nil, err
	}
	return build(ctx, zones)
}

func build(ctx context.Context, zones []zone) (vfs.FileSystem, error) {
	dirs := map[string]bool{}
	var entries []layerfs.Entry
	for _, d := range []string{"/usr", "/usr/share", Dir} {
		dirs[d] = true
		entries = append(entries, layerfs.Entry{Path: d, Dir: true})
	}
	// CPython's WASI build sees its own standard library at /usr, not the
	// VM's: it finds the zones through /etc/zoneinfo, also on its TZPATH.
	entries = append(entries, layerfs.Entry{Path: "/etc", Dir: true}, layerfs.Entry{Path: "/etc/zoneinfo", Link: Dir})
	slices.SortFunc(zones, func(a, b zone) int { return strings.Compare(a.name, b.name) })
	for _, z := range zones {
		p := path.Join(Dir, z.name)
		var parents []string
		for d := path.Dir(p); !dirs[d]; d = path.Dir(d) {
			parents = append(parents, d)
			dirs[d] = true
		}
		slices.Reverse(parents)
		for _, d := range parents {
			entries = append(entries, layerfs.Entry{Path: d, Dir: true})
		}
		entries = append(entries, layerfs.Entry{Path: p, Data: z.data})
	}
	return layerfs.Build(ctx, entries)
}
