// Package snapshot saves and restores the writable filesystems of a VM.
//
// A snapshot is a manifest (JSON: a version, the fingerprint of the
// read-only layers it was taken over, one entry per file, directory and
// symlink of each memory layer with its mode, owner, mtime and symlink
// target or content hash, and opaque metadata that package secexec fills
// with env, cwd, permissions, limits and labels) plus blobs: file contents,
// gzip-compressed, stored under the SHA-256 of their uncompressed bytes.
// Identical files are stored once across every snapshot of a store, and
// the userland layers are never stored (only referenced). Restore checks
// every blob against its hash and the manifest against its id, so a store
// that was tampered with or torn is an error, never a wrong VM.
package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
)

// ErrNotFound is returned for a snapshot or blob a store does not hold;
// it matches errno.ENOENT (and so fs.ErrNotExist), also across the engine
// protocol.
var ErrNotFound = fmt.Errorf("snapshot: not found: %w", errno.ENOENT)

// ErrCorrupt is returned when stored data does not match its hash; it
// matches errno.EIO.
var ErrCorrupt = fmt.Errorf("snapshot: stored data does not match its hash: %w", errno.EIO)

// Store keeps manifests and blobs durably. Implementations must make a
// Put either complete or absent after a crash: a reader never sees half
// of one.
type Store interface {
	// HasBlob reports whether the blob with this content hash is stored,
	// and, if it is, keeps it from being collected by a concurrent GC.
	HasBlob(ctx context.Context, hash string) (bool, error)
	// PutBlob stores the compressed bytes of r under hash.
	PutBlob(ctx context.Context, hash string, r io.Reader) error
	// OpenBlob returns the compressed bytes stored under hash.
	OpenBlob(ctx context.Context, hash string) (io.ReadCloser, error)
	// PutManifest stores a manifest under its id.
	PutManifest(ctx context.Context, id string, data []byte) error
	// GetManifest returns the manifest stored under id (ErrNotFound if
	// none).
	GetManifest(ctx context.Context, id string) ([]byte, error)
	// List returns the ids of the stored manifests, sorted.
	List(ctx context.Context) ([]string, error)
	// Delete removes the manifest id and the blobs no other manifest
	// refers to.
	Delete(ctx context.Context, id string) error
}

// DirStore is a Store in a local directory: manifests in manifests/ and
// blobs in blobs/xx/, each written to a temporary name, fsynced, renamed
// into place and its directory fsynced, so that whatever survives a crash
// (kill -9, power loss) is whole. A crash mid-snapshot leaves at most
// unreferenced blobs and temporary files, which Delete's collection
// removes; the previous snapshots are untouched.
type DirStore struct {
	dir string
	// mu orders Delete's collection after the Puts of this process;
	// other processes are covered by GCGrace.
	mu sync.RWMutex
	// pending maps the blobs written since the last PutManifest to their
	// temporary files in staging/. They are written without an fsync
	// each (one costs milliseconds): PutManifest syncs the filesystem
	// once, renames them into place, syncs again, and only then writes
	// the manifest, so a blob under its final name is always whole and
	// a crash leaves at most unreferenced temporary files.
	pendingMu sync.Mutex
	pending   map[string]string
	// recMu orders the record writes of this process; flock orders
	// those of others (see lockRecords).
	recMu sync.Mutex
}

// GCGrace is how old an unreferenced blob or temporary file must be
// before Delete collects it: a snapshot in progress in another process
// (an engine) writes its blobs before its manifest, and HasBlob refreshes
// the time of a blob it reuses.
const GCGrace = time.Hour

// OpenDir returns the store in dir, creating it if needed.
func OpenDir(dir string) (*DirStore, error) {
	for _, d := range []string{dir, filepath.Join(dir, "manifests"), filepath.Join(dir, "blobs"), filepath.Join(dir, "staging")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("snapshot: store %s: %w", dir, err)
		}
	}
	return &DirStore{dir: dir}, nil
}

// Dir returns the store's directory.
func (s *DirStore) Dir() string { return s.dir }

// validHash reports whether h is a lowercase hex SHA-256, the only blob
// names a store accepts (they become file names).
func validHash(h string) bool {
	if len(h) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

// ValidID reports whether id can name a manifest: 32 lowercase hex digits.
func ValidID(id string) bool {
	if len(id) != idLen {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

const idLen = 32

func (s *DirStore) blobPath(h string) string { return filepath.Join(s.dir, "blobs", h[:2], h) }
func (s *DirStore) manifestPath(id string) string {
	return filepath.Join(s.dir, "manifests", id+".json")
}

// HasBlob reports whether hash is stored and refreshes its time.
func (s *DirStore) HasBlob(_ context.Context, hash string) (bool, error) {
	if !validHash(hash) {
		return false, fmt.Errorf("snapshot: blob name %q: %w", hash, ErrCorrupt)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	p := s.blobPath(hash)
	now := time.Now()
	err := os.Chtimes(p, now, now)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// PutBlob writes r to a temporary file, to be put under hash by the next
// PutManifest.
func (s *DirStore) PutBlob(_ context.Context, hash string, r io.Reader) error {
	if !validHash(hash) {
		return fmt.Errorf("snapshot: blob name %q: %w", hash, ErrCorrupt)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	f, err := os.CreateTemp(filepath.Join(s.dir, "staging"), ".tmp-")
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return fmt.Errorf("snapshot: write blob: %w", err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("snapshot: %w", err)
	}
	s.pendingMu.Lock()
	if s.pending == nil {
		s.pending = make(map[string]string)
	}
	if old, ok := s.pending[hash]; ok {
		_ = os.Remove(old)
	}
	s.pending[hash] = f.Name()
	s.pendingMu.Unlock()
	return nil
}

// commitBlobs makes the pending blobs durable under their names: sync,
// rename, sync.
func (s *DirStore) commitBlobs() error {
	s.pendingMu.Lock()
	pending := s.pending
	s.pending = nil
	s.pendingMu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	if err := s.syncfs(); err != nil {
		return err
	}
	for hash, tmp := range pending {
		p := s.blobPath(hash)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if err := os.Rename(tmp, p); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	return s.syncfs()
}

// syncfs flushes the filesystem holding the store: one flush for every
// blob written, instead of one per blob.
func (s *DirStore) syncfs() error {
	d, err := os.Open(s.dir)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return fmt.Errorf("snapshot: syncfs: %w", err)
	}
	return nil
}

// OpenBlob opens the stored blob.
func (s *DirStore) OpenBlob(_ context.Context, hash string) (io.ReadCloser, error) {
	if !validHash(hash) {
		return nil, fmt.Errorf("snapshot: blob name %q: %w", hash, ErrCorrupt)
	}
	f, err := os.Open(s.blobPath(hash))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("snapshot: blob %s: %w", hash, ErrNotFound)
	}
	return f, err
}

// PutManifest writes a manifest atomically.
func (s *DirStore) PutManifest(_ context.Context, id string, data []byte) error {
	if !ValidID(id) {
		return fmt.Errorf("snapshot: id %q: %w", id, ErrNotFound)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.commitBlobs(); err != nil {
		return err
	}
	return writeAtomic(s.manifestPath(id), strings.NewReader(string(data)), true)
}

// GetManifest reads a manifest, bounded by MaxManifest.
func (s *DirStore) GetManifest(_ context.Context, id string) ([]byte, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("snapshot %q: %w", id, ErrNotFound)
	}
	f, err := os.Open(s.manifestPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("snapshot %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxManifest+1))
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if len(data) > MaxManifest {
		return nil, fmt.Errorf("snapshot %s: manifest over %d bytes: %w", id, MaxManifest, ErrCorrupt)
	}
	return data, nil
}

// List returns the stored manifest ids.
func (s *DirStore) List(context.Context) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, "manifests"))
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return manifestIDs(names), nil
}

// manifestIDs returns the sorted ids of the manifest file (or key) names
// among names.
func manifestIDs(names []string) []string {
	var ids []string
	for _, n := range names {
		if id, ok := strings.CutSuffix(n, ".json"); ok && ValidID(id) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// Delete removes manifest id, then collects the blobs and temporary
// files that no remaining manifest refers to and that are older than
// GCGrace.
func (s *DirStore) Delete(ctx context.Context, id string) error {
	if !ValidID(id) {
		return fmt.Errorf("snapshot %q: %w", id, ErrNotFound)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := os.Remove(s.manifestPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("snapshot %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := syncDir(filepath.Join(s.dir, "manifests")); err != nil {
		return err
	}
	return s.collect(ctx)
}

// collect removes unreferenced old blobs and stale temporary files; s.mu
// is held.
func (s *DirStore) collect(ctx context.Context) error {
	live, err := liveBlobs(ctx, s)
	if err != nil || live == nil {
		return err
	}
	old := time.Now().Add(-GCGrace)
	return filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		tmp := strings.HasPrefix(name, ".tmp-")
		if !tmp && (!validHash(name) || live[name] || filepath.Base(filepath.Dir(filepath.Dir(p))) != "blobs") {
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().Before(old) {
			_ = os.Remove(p)
		}
		return nil
	})
}

// writeAtomic writes r to p through a temporary file in the same
// directory: written, fsynced, renamed, and the directory fsynced if
// syncParent.
func writeAtomic(p string, r io.Reader, syncParent bool) error {
	dir := filepath.Dir(p)
	f, err := os.CreateTemp(dir, ".tmp-")
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if _, err := io.Copy(f, r); err != nil {
		return fmt.Errorf("snapshot: write %s: %w", filepath.Base(p), err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("snapshot: sync: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	ok = true
	if !syncParent {
		return nil
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("snapshot: sync %s: %w", dir, err)
	}
	return nil
}
