package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7"
	"golang.org/x/sys/unix"

	"github.com/secexec/secexec/kernel/errno"
)

// ErrConflict is returned by a conditional PutRecord that another writer
// got to first: the record is not what the caller last read. It matches
// errno.EEXIST.
var ErrConflict = fmt.Errorf("snapshot: the record was changed by another writer: %w", errno.EEXIST)

// Records keeps small JSON records (at most MaxRecord bytes) beside a
// store's snapshots, with compare-and-swap: what replicas of a fleet
// agree on (who owns a paused VM) is decided by a conditional write, not
// by a lock.
type Records interface {
	// GetRecord returns the record name and its version (ErrNotFound if
	// none).
	GetRecord(ctx context.Context, name string) (data []byte, version string, err error)
	// PutRecord stores data under name if the stored record's version is
	// still version ("" : only if there is no record), and returns the
	// new version; ErrConflict otherwise.
	PutRecord(ctx context.Context, name string, data []byte, version string) (string, error)
	// DeleteRecord removes the record name (no error if absent).
	DeleteRecord(ctx context.Context, name string) error
	// ListRecords returns the names of the records under dir (a name
	// prefix ending in "/", or "" for all), sorted.
	ListRecords(ctx context.Context, dir string) ([]string, error)
}

// recordName is what a record may be called: up to four segments of
// lowercase letters, digits and dashes.
var recordName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,127}(/[a-z0-9][a-z0-9-]{0,127}){0,3}$`)

func checkRecord(name string, data []byte) error {
	if !recordName.MatchString(name) {
		return fmt.Errorf("snapshot: record name %.70q: %w", name, errno.EINVAL)
	}
	if len(data) > MaxRecord {
		return fmt.Errorf("snapshot: record of %d bytes over %d: %w", len(data), MaxRecord, errno.EFBIG)
	}
	return nil
}

func checkRecordDir(dir string) error {
	if dir != "" && !recordName.MatchString(strings.TrimSuffix(dir, "/")) || dir != "" && !strings.HasSuffix(dir, "/") {
		return fmt.Errorf("snapshot: record directory %.70q: %w", dir, errno.EINVAL)
	}
	return nil
}

// OpenRecords opens the records kept at loc (an s3:// URL or a
// directory).
func OpenRecords(loc string, creds Credentials) (Records, error) {
	if IsS3(loc) {
		return OpenS3(loc, creds)
	}
	if loc == "" {
		return nil, fmt.Errorf("snapshot: no store location: %w", errno.EINVAL)
	}
	// Only records/ (made by the first write): the directory holds
	// stores, it is not one.
	if err := os.MkdirAll(loc, 0o700); err != nil {
		return nil, fmt.Errorf("snapshot: records %s: %w", loc, err)
	}
	return &DirStore{dir: loc}, nil
}

func (s *S3Store) recordKey(name string) string { return s.prefix + "records/" + name + ".json" }

// GetRecord reads a record; its version is the object's ETag.
func (s *S3Store) GetRecord(ctx context.Context, name string) ([]byte, string, error) {
	if err := checkRecord(name, nil); err != nil {
		return nil, "", err
	}
	data, etag, err := s.getBounded(ctx, s.recordKey(name), MaxRecord)
	if errors.Is(err, ErrNotFound) {
		return nil, "", fmt.Errorf("snapshot: record %s: %w", name, ErrNotFound)
	}
	return data, etag, err
}

// PutRecord writes a record with If-None-Match: * (a new one) or
// If-Match: ETAG, which the server checks atomically with the write.
func (s *S3Store) PutRecord(ctx context.Context, name string, data []byte, version string) (string, error) {
	if err := checkRecord(name, data); err != nil {
		return "", err
	}
	opts := minio.PutObjectOptions{ContentType: "application/json", DisableMultipart: true}
	if version == "" {
		opts.SetMatchETagExcept("*")
	} else {
		opts.SetMatchETag(version)
	}
	info, err := s.c.PutObject(ctx, s.bucket, s.recordKey(name), bytes.NewReader(data), int64(len(data)), opts)
	switch code := s3Code(err); {
	case err == nil:
		return info.ETag, nil
	case code == "PreconditionFailed" || code == "ConditionalRequestConflict" || isNotFound(err) && version != "":
		return "", fmt.Errorf("snapshot: record %s: %w", name, ErrConflict)
	}
	return "", s3Err("put record", err)
}

// DeleteRecord removes a record.
func (s *S3Store) DeleteRecord(ctx context.Context, name string) error {
	if err := checkRecord(name, nil); err != nil {
		return err
	}
	err := s.c.RemoveObject(ctx, s.bucket, s.recordKey(name), minio.RemoveObjectOptions{})
	if isNotFound(err) {
		return nil
	}
	return s3Err("delete record", err)
}

// ListRecords lists the records under dir.
func (s *S3Store) ListRecords(ctx context.Context, dir string) ([]string, error) {
	if err := checkRecordDir(dir); err != nil {
		return nil, err
	}
	keys, err := s.list(ctx, "records/"+dir)
	if err != nil {
		return nil, err
	}
	return recordNames(dir, keys), nil
}

func recordNames[T any](dir string, keys map[string]T) []string {
	var out []string
	for k := range keys {
		if n, ok := strings.CutSuffix(k, ".json"); ok && recordName.MatchString(dir+n) {
			out = append(out, dir+n)
		}
	}
	sort.Strings(out)
	return out
}

func (s *DirStore) recordPath(name string) string {
	return filepath.Join(s.dir, "records", filepath.FromSlash(name)+".json")
}

// recordVersion is a DirStore record's version: the hash of its bytes.
func recordVersion(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// lockRecords takes the records' lock: s.recMu against this process,
// flock against other processes on the same directory.
func (s *DirStore) lockRecords() (unlock func(), err error) {
	s.recMu.Lock()
	dir := filepath.Join(s.dir, "records")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.recMu.Unlock()
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		s.recMu.Unlock()
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		_ = f.Close()
		s.recMu.Unlock()
		return nil, fmt.Errorf("snapshot: lock records: %w", err)
	}
	return func() {
		_ = f.Close() // releases the flock
		s.recMu.Unlock()
	}, nil
}

func (s *DirStore) readRecord(name string) ([]byte, string, error) {
	data, err := os.ReadFile(s.recordPath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("snapshot: record %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, "", fmt.Errorf("snapshot: %w", err)
	}
	if len(data) > MaxRecord {
		return nil, "", fmt.Errorf("snapshot: record %s over %d bytes: %w", name, MaxRecord, ErrCorrupt)
	}
	return data, recordVersion(data), nil
}

// GetRecord reads a record.
func (s *DirStore) GetRecord(_ context.Context, name string) ([]byte, string, error) {
	if err := checkRecord(name, nil); err != nil {
		return nil, "", err
	}
	return s.readRecord(name)
}

// PutRecord compares and writes under the records' lock, atomically
// (temporary file, fsync, rename).
func (s *DirStore) PutRecord(_ context.Context, name string, data []byte, version string) (string, error) {
	if err := checkRecord(name, data); err != nil {
		return "", err
	}
	unlock, err := s.lockRecords()
	if err != nil {
		return "", err
	}
	defer unlock()
	_, cur, err := s.readRecord(name)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return "", err
	}
	if cur != version {
		return "", fmt.Errorf("snapshot: record %s: %w", name, ErrConflict)
	}
	p := s.recordPath(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("snapshot: %w", err)
	}
	if err := writeAtomic(p, bytes.NewReader(data), true); err != nil {
		return "", err
	}
	return recordVersion(data), nil
}

// DeleteRecord removes a record.
func (s *DirStore) DeleteRecord(_ context.Context, name string) error {
	if err := checkRecord(name, nil); err != nil {
		return err
	}
	unlock, err := s.lockRecords()
	if err != nil {
		return err
	}
	defer unlock()
	err = os.Remove(s.recordPath(name))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// ListRecords lists the records under dir.
func (s *DirStore) ListRecords(_ context.Context, dir string) ([]string, error) {
	if err := checkRecordDir(dir); err != nil {
		return nil, err
	}
	root := filepath.Join(s.dir, "records", filepath.FromSlash(dir))
	keys := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		if len(keys) >= maxListed {
			return fmt.Errorf("snapshot: more than %d records: %w", maxListed, errno.EFBIG)
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		keys[filepath.ToSlash(rel)] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot: list records: %w", err)
	}
	return recordNames(dir, keys), nil
}
