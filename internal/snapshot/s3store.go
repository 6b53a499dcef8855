package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/secexec/secexec/kernel/errno"
)

// Credentials authenticate to an S3 store. They travel from the server to
// the engine inside the engine protocol (never argv, never the engine's
// environment) and are never logged: String hides them.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

// String keeps credentials out of logs and error texts.
func (c Credentials) String() string {
	if c.AccessKeyID == "" {
		return "Credentials{}"
	}
	return "Credentials{redacted}"
}

// GoString keeps credentials out of %#v.
func (c Credentials) GoString() string { return c.String() }

// CredentialsFromEnv reads the standard AWS variables
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN).
func CredentialsFromEnv() Credentials {
	return Credentials{AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken: os.Getenv("AWS_SESSION_TOKEN")}
}

// IsS3 reports whether loc names an S3 store (an s3:// URL) rather than
// a directory.
func IsS3(loc string) bool { return strings.HasPrefix(loc, "s3://") }

// Open opens the store at loc: an s3:// URL (see OpenS3) or a directory.
func Open(loc string, creds Credentials) (Store, error) {
	if IsS3(loc) {
		return OpenS3(loc, creds)
	}
	if loc == "" {
		return nil, fmt.Errorf("snapshot: no store location: %w", errno.EINVAL)
	}
	return OpenDir(loc)
}

// Join returns the location of the store named name inside loc: a
// subdirectory, or a longer key prefix. name is one path segment.
func Join(loc, name string) string {
	if !IsS3(loc) {
		return strings.TrimSuffix(loc, "/") + "/" + name
	}
	u, err := url.Parse(loc)
	if err != nil {
		return loc + "/" + name // OpenS3 refuses it
	}
	// Not path.Join: a name such as ".." must stay for OpenS3 to refuse,
	// not climb out of loc.
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + name
	return u.String()
}

// S3Store is a Store in a bucket of S3-compatible object storage, under a
// key prefix: manifests under manifests/ID.json, blobs under
// blobs/HASH, records under records/NAME.json.
//
// Crash safety rests on PUT being atomic per object: every blob of a
// snapshot is stored before its manifest, so a writer that dies midway
// leaves unreferenced blobs and no manifest, and the earlier snapshots
// are untouched. A blob is buffered whole (in memory, or a temporary file
// when large) before its PUT starts, so a source that fails or changes
// while it is read stores nothing.
//
// Collection (Delete) follows DirStore's rule across replicas: a blob is
// removed only when no manifest refers to it and it was last written or
// refreshed more than GCGrace ago. HasBlob refreshes (copies onto itself)
// a blob it reuses that is older than GCGrace/2, so a snapshot that
// completes within GCGrace/2 of its start never refers to a collected
// blob, whichever replica collects.
type S3Store struct {
	c      *minio.Client
	bucket string
	prefix string // "" or ending in "/"
	loc    string
}

// S3 bounds.
const (
	// memBlob is the largest blob PutBlob buffers in memory; larger ones
	// go through a temporary file.
	memBlob = 8 << 20
	// maxListed bounds the keys one listing walks (manifests, blobs or
	// records): a store past it is refused rather than walked forever.
	maxListed = 1 << 20
	// MaxRecord is the most bytes a record may have.
	MaxRecord = 1 << 20
	// partSize is the part of a multipart PUT (large blobs).
	partSize = 16 << 20
)

var s3Segment = regexp.MustCompile(`^[A-Za-z0-9._=+-]{1,128}$`)

// s3Params are the query parameters an s3:// URL may carry.
var s3Params = map[string]bool{"endpoint": true, "region": true}

// OpenS3 opens the store at loc,
// s3://BUCKET[/PREFIX][?endpoint=http(s)://HOST:PORT][&region=REGION],
// with creds (anonymous when empty). Without endpoint it is AWS S3 over
// HTTPS. Credentials in the URL itself are refused: URLs end up in
// command lines and logs.
func OpenS3(loc string, creds Credentials) (*S3Store, error) {
	u, err := url.Parse(loc)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return nil, fmt.Errorf("snapshot: store %q: want s3://bucket/prefix: %w", redactURL(loc), errno.EINVAL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("snapshot: store URL must not carry credentials (use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY): %w", errno.EINVAL)
	}
	q := u.Query()
	for k := range q {
		if !s3Params[k] {
			return nil, fmt.Errorf("snapshot: store URL parameter %q: want endpoint or region: %w", k, errno.EINVAL)
		}
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		for _, seg := range strings.Split(prefix, "/") {
			if !s3Segment.MatchString(seg) || seg == "." || seg == ".." {
				return nil, fmt.Errorf("snapshot: store prefix %q: %w", prefix, errno.EINVAL)
			}
		}
		prefix += "/"
	}
	host, secure, lookup := "s3.amazonaws.com", true, minio.BucketLookupAuto
	if ep := q.Get("endpoint"); ep != "" {
		eu, err := url.Parse(ep)
		if err != nil || (eu.Scheme != "http" && eu.Scheme != "https") || eu.Host == "" || (eu.Path != "" && eu.Path != "/") || eu.User != nil {
			return nil, fmt.Errorf("snapshot: store endpoint %q: want http(s)://host[:port]: %w", redactURL(ep), errno.EINVAL)
		}
		// Self-hosted servers (MinIO, versitygw, Ceph) answer on paths,
		// not on a host name per bucket.
		host, secure, lookup = eu.Host, eu.Scheme == "https", minio.BucketLookupPath
	}
	c, err := minio.New(host, &minio.Options{
		Creds:        miniocreds.NewStaticV4(creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken),
		Secure:       secure,
		Region:       q.Get("region"),
		BucketLookup: lookup,
		Transport:    s3Transport,
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot: store %s: %w", redactURL(loc), err)
	}
	return &S3Store{c: c, bucket: u.Host, prefix: prefix, loc: loc}, nil
}

// s3Transport is shared by every S3Store, so that the stores opened per
// request (one per tenant) reuse connections instead of each keeping
// its own idle ones.
var s3Transport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	t.ResponseHeaderTimeout = time.Minute
	return t
}()

// redactURL drops any user info from a URL for an error text.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	return u.String()
}

// Location returns the URL the store was opened with.
func (s *S3Store) Location() string { return s.loc }

func (s *S3Store) blobKey(h string) string      { return s.prefix + "blobs/" + h }
func (s *S3Store) manifestKey(id string) string { return s.prefix + "manifests/" + id + ".json" }
func (s *S3Store) touchKey(h string) string     { return s.prefix + "touched/" + h }

// s3Response returns the S3 error answer err holds, if any.
func s3Response(err error) minio.ErrorResponse {
	var r minio.ErrorResponse
	if errors.As(err, &r) {
		return r
	}
	return minio.ToErrorResponse(err)
}

// s3Code returns the S3 error code of err ("" for none).
func s3Code(err error) string { return s3Response(err).Code }

func isNotFound(err error) bool {
	r := s3Response(err)
	return r.Code == "NoSuchKey" || r.StatusCode == http.StatusNotFound && r.Code != "NoSuchBucket"
}

func s3Err(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("snapshot: %s: %w", what, err)
	}
	return fmt.Errorf("snapshot: %s: %w: %w", what, errno.EIO, err)
}

// HasBlob reports whether hash is stored, refreshing its time when it is
// old enough for a collector to be near taking it.
func (s *S3Store) HasBlob(ctx context.Context, hash string) (bool, error) {
	if !validHash(hash) {
		return false, fmt.Errorf("snapshot: blob name %q: %w", hash, ErrCorrupt)
	}
	info, err := s.c.StatObject(ctx, s.bucket, s.blobKey(hash), minio.StatObjectOptions{})
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, s3Err("stat blob", err)
	}
	if time.Since(info.LastModified) < GCGrace/2 {
		return true, nil
	}
	// A fresh marker object renews the blob's time for collectors: a
	// copy onto itself would too on AWS, but not on every S3 server
	// (versitygw's posix backend keeps the file's mtime).
	_, err = s.c.PutObject(ctx, s.bucket, s.touchKey(hash), bytes.NewReader(nil), 0, minio.PutObjectOptions{DisableMultipart: true})
	if err != nil {
		return false, s3Err("refresh blob", err)
	}
	return true, nil
}

// PutBlob reads r whole, then stores it under hash with one PUT (a
// multipart one when large).
func (s *S3Store) PutBlob(ctx context.Context, hash string, r io.Reader) error {
	if !validHash(hash) {
		return fmt.Errorf("snapshot: blob name %q: %w", hash, ErrCorrupt)
	}
	var body io.Reader
	var size int64
	if b, ok := r.(*bytes.Buffer); ok {
		body, size = b, int64(b.Len())
	} else {
		var buf bytes.Buffer
		n, err := io.Copy(&buf, io.LimitReader(r, memBlob+1))
		if err != nil {
			return fmt.Errorf("snapshot: write blob: %w", err)
		}
		body, size = &buf, n
		if n > memBlob {
			f, err := os.CreateTemp("", "secexec-blob-")
			if err != nil {
				return fmt.Errorf("snapshot: %w", err)
			}
			defer f.Close()
			_ = os.Remove(f.Name()) // unlinked: nothing to clean after a crash
			if size, err = io.Copy(f, io.MultiReader(&buf, r)); err != nil {
				return fmt.Errorf("snapshot: write blob: %w", err)
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return fmt.Errorf("snapshot: %w", err)
			}
			body = f
		}
	}
	_, err := s.c.PutObject(ctx, s.bucket, s.blobKey(hash), body, size,
		minio.PutObjectOptions{ContentType: "application/gzip", PartSize: partSize})
	return s3Err("put blob", err)
}

// OpenBlob returns the stored blob's bytes.
func (s *S3Store) OpenBlob(ctx context.Context, hash string) (io.ReadCloser, error) {
	if !validHash(hash) {
		return nil, fmt.Errorf("snapshot: blob name %q: %w", hash, ErrCorrupt)
	}
	obj, err := s.c.GetObject(ctx, s.bucket, s.blobKey(hash), minio.GetObjectOptions{})
	if err == nil {
		_, err = obj.Stat() // GetObject is lazy: this sends the request
	}
	if isNotFound(err) {
		_ = obj.Close()
		return nil, fmt.Errorf("snapshot: blob %s: %w", hash, ErrNotFound)
	}
	if err != nil {
		if obj != nil {
			_ = obj.Close()
		}
		return nil, s3Err("get blob", err)
	}
	return obj, nil
}

// PutManifest stores a manifest: one PUT, after every blob it names.
func (s *S3Store) PutManifest(ctx context.Context, id string, data []byte) error {
	if !ValidID(id) {
		return fmt.Errorf("snapshot: id %q: %w", id, ErrNotFound)
	}
	if len(data) > MaxManifest {
		return fmt.Errorf("snapshot: manifest of %d bytes over %d: %w", len(data), MaxManifest, errno.EFBIG)
	}
	_, err := s.c.PutObject(ctx, s.bucket, s.manifestKey(id), bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: "application/json", PartSize: partSize})
	return s3Err("put manifest", err)
}

// getBounded reads the object key, at most limit bytes, with its ETag.
// An object replaced while it is read (the client's later range
// requests are conditional on the first ETag) is read again.
func (s *S3Store) getBounded(ctx context.Context, key string, limit int64) ([]byte, string, error) {
	for try := 0; ; try++ {
		data, etag, err := s.getOnce(ctx, key, limit)
		if s3Code(err) == "PreconditionFailed" && try < 3 {
			continue
		}
		return data, etag, err
	}
}

func (s *S3Store) getOnce(ctx context.Context, key string, limit int64) ([]byte, string, error) {
	obj, err := s.c.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, "", s3Err("get", err)
	}
	defer obj.Close()
	// The first read sends the request; Stat then answers from it.
	data, err := io.ReadAll(io.LimitReader(obj, limit+1))
	if isNotFound(err) {
		return nil, "", ErrNotFound
	}
	if err != nil {
		return nil, "", s3Err("get", err)
	}
	if int64(len(data)) > limit {
		return nil, "", fmt.Errorf("snapshot: %s: over %d bytes: %w", path.Base(key), limit, ErrCorrupt)
	}
	info, err := obj.Stat()
	if err != nil {
		return nil, "", s3Err("get", err)
	}
	return data, info.ETag, nil
}

// GetManifest reads a manifest, bounded by MaxManifest.
func (s *S3Store) GetManifest(ctx context.Context, id string) ([]byte, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("snapshot %q: %w", id, ErrNotFound)
	}
	data, _, err := s.getBounded(ctx, s.manifestKey(id), MaxManifest)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("snapshot %s: %w", id, ErrNotFound)
	}
	return data, err
}

// list returns the keys under dir (relative to it), at most maxListed,
// with their times.
func (s *S3Store) list(ctx context.Context, dir string) (map[string]time.Time, error) {
	out := make(map[string]time.Time)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing goroutine if we leave early
	for o := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix + dir, Recursive: true}) {
		if o.Err != nil {
			return nil, s3Err("list", o.Err)
		}
		if len(out) >= maxListed {
			return nil, fmt.Errorf("snapshot: more than %d objects under %s: %w", maxListed, dir, errno.EFBIG)
		}
		out[strings.TrimPrefix(o.Key, s.prefix+dir)] = o.LastModified
	}
	return out, nil
}

// List returns the stored manifest ids, sorted.
func (s *S3Store) List(ctx context.Context) ([]string, error) {
	keys, err := s.list(ctx, "manifests/")
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	return manifestIDs(names), nil
}

// Delete removes manifest id, then the blobs no remaining manifest refers
// to that are older than GCGrace.
func (s *S3Store) Delete(ctx context.Context, id string) error {
	if !ValidID(id) {
		return fmt.Errorf("snapshot %q: %w", id, ErrNotFound)
	}
	_, err := s.c.StatObject(ctx, s.bucket, s.manifestKey(id), minio.StatObjectOptions{})
	if isNotFound(err) {
		return fmt.Errorf("snapshot %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return s3Err("stat manifest", err)
	}
	if err := s.c.RemoveObject(ctx, s.bucket, s.manifestKey(id), minio.RemoveObjectOptions{}); err != nil {
		return s3Err("delete manifest", err)
	}
	return s.collect(ctx)
}

// collect removes the unreferenced blobs older than GCGrace.
func (s *S3Store) collect(ctx context.Context) error {
	live, err := liveBlobs(ctx, s)
	if err != nil || live == nil {
		return err
	}
	blobs, err := s.list(ctx, "blobs/")
	if err != nil {
		return err
	}
	touched, err := s.list(ctx, "touched/")
	if err != nil {
		return err
	}
	old := time.Now().Add(-GCGrace)
	for h, t := range blobs {
		if tt, ok := touched[h]; ok && tt.After(t) {
			t = tt
		}
		if validHash(h) && !live[h] && t.Before(old) {
			if err := s.remove(ctx, s.blobKey(h)); err != nil {
				return err
			}
		}
	}
	// Markers outlive their use once they are old themselves.
	for h, t := range touched {
		if t.Before(old) {
			if err := s.remove(ctx, s.touchKey(h)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *S3Store) remove(ctx context.Context, key string) error {
	if err := s.c.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil && !isNotFound(err) {
		return s3Err("collect", err)
	}
	return nil
}

// liveBlobs returns the blobs st's manifests refer to, or nil (and no
// error) when a manifest cannot be decoded: collecting on a guess could
// destroy a snapshot that is only misread.
func liveBlobs(ctx context.Context, st Store) (map[string]bool, error) {
	ids, err := st.List(ctx)
	if err != nil {
		return nil, err
	}
	live := make(map[string]bool)
	for _, id := range ids {
		data, err := st.GetManifest(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since it was listed
		}
		if err != nil {
			return nil, err
		}
		m, err := Decode(id, data)
		if err != nil {
			return nil, nil
		}
		for _, l := range m.Layers {
			for _, e := range l.Entries {
				if e.Blob != "" {
					live[e.Blob] = true
				}
			}
		}
	}
	return live, nil
}
