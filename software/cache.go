package software

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/secexec/secexec/software/aospkg"
)

// metadataFormat versions the metadata file; other values are ignored (the
// package is then fetched again).
const metadataFormat = 1

// maxMetadata bounds the metadata file read at load time.
const maxMetadata = 4 << 20

// metadata is the JSON file written next to each cached container. Its
// presence means the install completed.
type metadata struct {
	Format    int    `json:"format"`
	Package   string `json:"package"`
	Version   string `json:"version"`
	Integrity string `json:"integrity"`
	// Size and SHA256 describe the .aospkg file.
	Size   int64  `json:"aospkg_size"`
	SHA256 string `json:"aospkg_sha256"`
	// Modules maps each command entry ("bin/ls") to the sha256 of its bytes.
	Modules   map[string]string `json:"modules"`
	Installed time.Time         `json:"installed"`
}

func (s *Store) base(pin Pin) string {
	return filepath.Join(s.dir, "packages", pin.Name()+"@"+pin.Version)
}

// load opens the cached copy of pin and checks it against its metadata.
// With full set the container is re-hashed too. A missing package yields an
// error matching os.ErrNotExist.
func (s *Store) load(pin Pin, full bool) (*installed, error) {
	base := s.base(pin)
	var m metadata
	if err := readMetadata(base+".json", pin, &m); err != nil {
		return nil, err
	}
	if m.Format != metadataFormat || m.Package != pin.Package || m.Version != pin.Version || m.Integrity != pin.Integrity {
		return nil, fmt.Errorf("%w: %s: metadata is for %s@%s %s (format %d)", ErrCorrupt, pin.Spec(), m.Package, m.Version, m.Integrity, m.Format)
	}
	path := base + ".aospkg"
	if full {
		if err := verifyFile(path, m.SHA256); err != nil {
			return nil, err
		}
	}
	pkg, err := aospkg.OpenFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadPackage, pin.Spec(), err)
	}
	ip := &installed{pin: pin, meta: m, path: path, pkg: pkg, fps: make(map[string]Fingerprint)}
	if err := ip.check(); err != nil {
		pkg.Close()
		return nil, err
	}
	return ip, nil
}

// check validates the metadata against the opened container and parses the
// module fingerprints.
func (ip *installed) check() error {
	if ip.pkg.Size() != ip.meta.Size {
		return fmt.Errorf("%w: %s: container is %d bytes, recorded %d", ErrCorrupt, ip.pin.Spec(), ip.pkg.Size(), ip.meta.Size)
	}
	for _, c := range ip.pkg.Commands() {
		e, ok := ip.pkg.Lookup(c.Entry)
		if !ok || e.Kind != aospkg.KindFile {
			return fmt.Errorf("%w: %s: command %q: entry %q is not a file in the package", ErrBadPackage, ip.pin.Spec(), c.Command, c.Entry)
		}
		fp, err := parseFingerprint(ip.meta.Modules[c.Entry])
		if err != nil {
			return fmt.Errorf("%w: %s: module %q: %v", ErrCorrupt, ip.pin.Spec(), c.Entry, err)
		}
		ip.fps[c.Entry] = fp
	}
	return nil
}

// readMetadata decodes a package's metadata file into m. A missing file
// yields an error matching os.ErrNotExist.
func readMetadata(name string, pin Pin, m any) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxMetadata+1))
	f.Close()
	if err != nil {
		return err
	}
	if len(b) > maxMetadata {
		return fmt.Errorf("%w: %s: metadata too large", ErrCorrupt, pin.Spec())
	}
	if err := json.Unmarshal(b, m); err != nil {
		return fmt.Errorf("%w: %s: metadata: %v", ErrCorrupt, pin.Spec(), err)
	}
	return nil
}

// installTarball verifies the tarball at tgz against pin, unpacks its
// container into the cache and records the metadata. Nothing is written to
// the cache unless every check passes.
func (s *Store) installTarball(ctx context.Context, pin Pin, tgz string) (*installed, error) {
	out, sum, err := s.unpackMember(ctx, pin, tgz, aospkgMember, s.limits.aospkg, ".aospkg")
	if err != nil {
		return nil, err
	}
	defer func() {
		out.Close()
		os.Remove(out.Name()) // fails harmlessly once renamed
	}()
	fi, err := out.Stat()
	if err != nil {
		return nil, fmt.Errorf("software: %w", err)
	}
	pkg, err := aospkg.Open(out, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBadPackage, pin.Spec(), err)
	}
	meta := metadata{
		Format: metadataFormat, Package: pin.Package, Version: pin.Version, Integrity: pin.Integrity,
		Size: fi.Size(), SHA256: hexSum(sum), Modules: make(map[string]string), Installed: time.Now().UTC(),
	}
	for _, c := range pkg.Commands() {
		if _, done := meta.Modules[c.Entry]; done {
			continue
		}
		r, err := pkg.Open(c.Entry)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: command %q: %w", ErrBadPackage, pin.Spec(), c.Command, err)
		}
		h := sha256.New()
		if _, err := io.Copy(h, r); err != nil {
			return nil, fmt.Errorf("software: %s: %w", pin.Spec(), err)
		}
		meta.Modules[c.Entry] = hexSum(h.Sum(nil))
	}
	// CreateTemp made the file private; the cache is readable like any
	// other installed software.
	if err := out.Chmod(0o644); err != nil {
		return nil, fmt.Errorf("software: %w", err)
	}
	if err := out.Sync(); err != nil {
		return nil, fmt.Errorf("software: %w", err)
	}
	if err := out.Close(); err != nil {
		return nil, fmt.Errorf("software: %w", err)
	}
	base := s.base(pin)
	// Order matters: the container first, the metadata (the commit
	// record) last, each by rename, so a crash leaves no half package.
	if err := os.Rename(out.Name(), base+".aospkg"); err != nil {
		return nil, fmt.Errorf("software: %w", err)
	}
	mb, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("software: %w", err)
	}
	if err := writeFileAtomic(base+".json", append(mb, '\n'), filepath.Join(s.dir, "tmp"), pin.Name()+"@"+pin.Version+"-*.json"); err != nil {
		return nil, err
	}
	s.log.Debug("software: unpacked", "package", pin.Spec(), "bytes", fi.Size(), "modules", len(meta.Modules))
	return s.load(pin, false)
}

// unpackMember verifies the tarball at tgz against pin, then copies the
// regular file member (at most maxSize bytes) out of it into a new
// temporary file of the cache (named with ext) and returns it, open, with
// its sha256. The caller renames it into place or removes it.
func (s *Store) unpackMember(ctx context.Context, pin Pin, tgz, member string, maxSize int64, ext string) (*os.File, []byte, error) {
	if err := s.mkdirs(); err != nil {
		return nil, nil, err
	}
	f, err := os.Open(tgz)
	if err != nil {
		return nil, nil, fmt.Errorf("software: %s: %w", pin.Spec(), err)
	}
	defer f.Close()
	if err := verifyTarball(f, pin, s.limits, s.progress); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	out, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), pin.Name()+"@"+pin.Version+"-*"+ext)
	if err != nil {
		return nil, nil, fmt.Errorf("software: %w", err)
	}
	sum, err := extractMember(io.NewSectionReader(f, 0, 1<<62), out, pin, member, maxSize, s.limits, s.progress)
	if err != nil {
		out.Close()
		os.Remove(out.Name())
		return nil, nil, err
	}
	return out, sum, nil
}

// writeFileAtomic writes data to a temporary file in tmpDir and renames it
// to name.
func writeFileAtomic(name string, data []byte, tmpDir, pattern string) error {
	f, err := os.CreateTemp(tmpDir, pattern)
	if err != nil {
		return fmt.Errorf("software: %w", err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		return fmt.Errorf("software: %w", err)
	}
	return nil
}

func parseFingerprint(s string) (Fingerprint, error) {
	var fp Fingerprint
	if len(s) != 2*len(fp) {
		return fp, errors.New("missing or malformed fingerprint")
	}
	if _, err := hex.Decode(fp[:], []byte(s)); err != nil {
		return fp, errors.New("malformed fingerprint")
	}
	return fp, nil
}
