package snapshot

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/s3test"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/fs/memfs"
)

// s3Store starts a versitygw and opens a store under prefix in it.
func s3Store(t *testing.T, prefix string) (*S3Store, *s3test.Server) {
	t.Helper()
	srv := s3test.Start(t)
	st, err := OpenS3(srv.URL(prefix), Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	return st, srv
}

// objectPath is where the posix backend keeps key of the test bucket.
func objectPath(srv *s3test.Server, key string) string {
	return filepath.Join(srv.Dir, srv.Bucket, filepath.FromSlash(key))
}

// TestS3RoundTrip: a snapshot stored in S3 restores to the same tree,
// and unchanged content is not stored again.
func TestS3RoundTrip(t *testing.T) {
	st, _ := s3Store(t, "tenants/t1")
	src := tree(t, "x")
	m, err := Capture(bg, st, "base1", []byte(`{"k":1}`), []Source{{"/", src}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Stored == 0 || m.Stored > m.Bytes/10 {
		t.Fatalf("stored %d of %d bytes", m.Stored, m.Bytes)
	}
	got, err := Load(bg, st, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	dst := memfs.New(memfs.Options{})
	if err := Restore(bg, st, got.Layer("/"), dst); err != nil {
		t.Fatal(err)
	}
	if a, b := dump(t, src), dump(t, dst); a != b {
		t.Fatalf("restored tree differs:\n%s\nvs\n%s", a, b)
	}
	m2, err := Capture(bg, st, "base1", nil, []Source{{"/", tree(t, "x")}})
	if err != nil || m2.Stored != 0 {
		t.Fatalf("identical snapshot stored %d bytes: %v", m2.Stored, err)
	}
	ids, err := st.List(bg)
	if err != nil || len(ids) != 2 {
		t.Fatalf("list = %v, %v", ids, err)
	}
	if _, err := st.GetManifest(bg, strings.Repeat("0", 32)); !errors.Is(err, ErrNotFound) || !errors.Is(err, errno.ENOENT) {
		t.Fatalf("unknown manifest: %v", err)
	}
	if _, err := st.OpenBlob(bg, strings.Repeat("0", 64)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown blob: %v", err)
	}
	// Another prefix of the same bucket is another store.
	if other, err := OpenS3(Join(st.Location(), ".."), Credentials{}); err == nil {
		t.Fatalf("prefix .. accepted: %v", other.Location())
	}
}

// TestS3Corruption: a blob changed in the bucket is refused on restore.
func TestS3Corruption(t *testing.T) {
	st, srv := s3Store(t, "p")
	m, err := Capture(bg, st, "", nil, []Source{{"/", tree(t, "x")}})
	if err != nil {
		t.Fatal(err)
	}
	var blob string
	for _, e := range m.Layers[0].Entries {
		if e.Size > 1000 {
			blob = e.Blob
		}
	}
	bp := objectPath(srv, "p/blobs/"+blob)
	data, err := os.ReadFile(bp)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(bp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Restore(bg, st, m.Layer("/"), memfs.New(memfs.Options{})); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt blob: %v", err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(bp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	// A small file's blob, which Restore fetches ahead: swapped for
	// another valid blob, and then grown far past its file.
	var small, other string
	for _, e := range m.Layers[0].Entries {
		if e.Size > 0 && e.Size < 1000 && small == "" {
			small = e.Blob
		} else if e.Size > 1000 {
			other = e.Blob
		}
	}
	sp := objectPath(srv, "p/blobs/"+small)
	orig, _ := os.ReadFile(sp)
	big, _ := os.ReadFile(objectPath(srv, "p/blobs/"+other))
	for _, bad := range [][]byte{big, append(append([]byte{}, orig...), make([]byte, 1<<20)...)} {
		if err := os.WriteFile(sp, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Restore(bg, st, m.Layer("/"), memfs.New(memfs.Options{})); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("corrupt small blob: %v", err)
		}
	}
	if err := os.WriteFile(sp, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Restore(bg, st, m.Layer("/"), memfs.New(memfs.Options{})); err != nil {
		t.Fatalf("repaired store: %v", err)
	}
	mp := objectPath(srv, "p/manifests/"+m.ID+".json")
	manifest, _ := os.ReadFile(mp)
	if err := os.WriteFile(mp, append(manifest, ' '), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bg, st, m.ID); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("tampered manifest: %v", err)
	}
}

// ageObjects makes every object under dir look written 2*GCGrace ago
// (the posix backend reports a file's mtime as LastModified).
func ageObjects(t *testing.T, dir string) {
	t.Helper()
	old := time.Now().Add(-2 * GCGrace)
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestS3DeleteCollects: Delete removes only blobs no other snapshot
// needs and that are past the grace period; a blob a writer reuses
// (HasBlob) is refreshed and so survives a collection that starts
// before the writer's manifest lands.
func TestS3DeleteCollects(t *testing.T) {
	st, srv := s3Store(t, "gc")
	m1, err := Capture(bg, st, "", nil, []Source{{"/", tree(t, "x")}})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Capture(bg, st, "", nil, []Source{{"/", tree(t, "y")}})
	if err != nil {
		t.Fatal(err)
	}
	blobDir := objectPath(srv, "gc/blobs")
	ageObjects(t, objectPath(srv, "gc"))
	// A writer in another replica is about to reuse m1's big blob: it
	// asked HasBlob before m1 goes.
	var big string
	for _, e := range m1.Layers[0].Entries {
		if e.Size > 1000 {
			big = e.Blob
		}
	}
	if has, err := st.HasBlob(bg, big); err != nil || !has {
		t.Fatalf("HasBlob = %v, %v", has, err)
	}
	if err := st.Delete(bg, m1.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(bg, m1.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	left, _ := os.ReadDir(blobDir)
	if len(left) != 3 { // m2's two, and the refreshed one
		t.Fatalf("%d blobs left, want 3", len(left))
	}
	if _, err := os.Stat(filepath.Join(blobDir, big)); err != nil {
		t.Fatalf("the refreshed blob was collected: %v", err)
	}
	if err := Restore(bg, st, m2.Layer("/"), memfs.New(memfs.Options{})); err != nil {
		t.Fatalf("surviving snapshot: %v", err)
	}
}

// TestS3KillMidSnapshot kills -9 a process that writes snapshots to S3
// in a loop; every snapshot listed afterwards restores, the first one
// included.
func TestS3KillMidSnapshot(t *testing.T) {
	if loc := os.Getenv("SNAPSHOT_TEST_S3_WRITER"); loc != "" {
		st, err := OpenS3(loc, CredentialsFromEnv())
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			if _, err := Capture(bg, st, "", nil, []Source{{"/", tree(t, fmt.Sprint(i))}}); err != nil {
				t.Fatal(err)
			}
			_ = os.WriteFile(os.Getenv("SNAPSHOT_TEST_PROGRESS"), []byte(fmt.Sprint(i)), 0o600)
		}
	}
	st, srv := s3Store(t, "kill")
	first, err := Capture(bg, st, "", nil, []Source{{"/", tree(t, "first")}})
	if err != nil {
		t.Fatal(err)
	}
	progress := filepath.Join(t.TempDir(), "progress")
	cmd := exec.Command(os.Args[0], "-test.run=^TestS3KillMidSnapshot$")
	cmd.Env = append(os.Environ(), "SNAPSHOT_TEST_S3_WRITER="+st.Location(), "SNAPSHOT_TEST_PROGRESS="+progress,
		"AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for {
		b, _ := os.ReadFile(progress)
		if n, err := strconv.Atoi(string(b)); err == nil && n >= 2 {
			break
		}
		if cmd.ProcessState != nil {
			t.Fatal("the writer ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	checkAllRestore(t, st, 4, first.ID)
}

// TestRecordsCAS: both stores' records are compare-and-swap: of writers
// racing from the same version exactly one wins, and a stale version is
// refused.
func TestRecordsCAS(t *testing.T) {
	s3, _ := s3Store(t, "rec")
	dir, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, rs := range map[string]Records{"s3": s3, "dir": dir} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := rs.GetRecord(bg, "t1/vm"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("absent record: %v", err)
			}
			v1, err := rs.PutRecord(bg, "t1/vm", []byte(`{"owner":"a"}`), "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rs.PutRecord(bg, "t1/vm", []byte(`{"owner":"b"}`), ""); !errors.Is(err, ErrConflict) {
				t.Fatalf("second create: %v", err)
			}
			// Eight replicas race to take the record over from v1.
			var wg sync.WaitGroup
			wins := make(chan string, 8)
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := rs.PutRecord(bg, "t1/vm", []byte(fmt.Sprintf(`{"owner":"r%d"}`, i)), v1)
					if err == nil {
						wins <- fmt.Sprintf(`{"owner":"r%d"}`, i)
					} else if !errors.Is(err, ErrConflict) {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			close(wins)
			var won []string
			for w := range wins {
				won = append(won, w)
			}
			if len(won) != 1 {
				t.Fatalf("%d writers won: %v", len(won), won)
			}
			data, v2, err := rs.GetRecord(bg, "t1/vm")
			if err != nil || string(data) != won[0] || v2 == v1 {
				t.Fatalf("record %s %q, %v", data, v2, err)
			}
			if _, err := rs.PutRecord(bg, "t1/vm", []byte(`{}`), v1); !errors.Is(err, ErrConflict) {
				t.Fatalf("stale version: %v", err)
			}
			if _, err := rs.PutRecord(bg, "t2/other", []byte(`{}`), ""); err != nil {
				t.Fatal(err)
			}
			if names, err := rs.ListRecords(bg, "t1/"); err != nil || len(names) != 1 || names[0] != "t1/vm" {
				t.Fatalf("list t1/ = %v, %v", names, err)
			}
			if names, err := rs.ListRecords(bg, ""); err != nil || len(names) != 2 {
				t.Fatalf("list = %v, %v", names, err)
			}
			if err := rs.DeleteRecord(bg, "t1/vm"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := rs.GetRecord(bg, "t1/vm"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("deleted record: %v", err)
			}
			for _, bad := range []string{"", "../x", "A", "a/../b", "a//b", "a/", strings.Repeat("a", 200)} {
				if _, err := rs.PutRecord(bg, bad, nil, ""); !errors.Is(err, errno.EINVAL) {
					t.Errorf("name %q: %v", bad, err)
				}
			}
			if _, err := rs.PutRecord(bg, "big", make([]byte, MaxRecord+1), ""); !errors.Is(err, errno.EFBIG) {
				t.Errorf("big record: %v", err)
			}
		})
	}
}

// TestOpenS3Refuses: URLs that carry credentials or anything unknown are
// refused, and no error text repeats a secret.
func TestOpenS3Refuses(t *testing.T) {
	for _, loc := range []string{
		"s3://user:hunter2@bucket/p",
		"s3://bucket/p?endpoint=ftp://x",
		"s3://bucket/p?endpoint=http://u:hunter2@host:9000",
		"s3://bucket/p?endpoint=http://host:9000/path",
		"s3://bucket/p?secret=hunter2",
		"s3://bucket/../p",
		"s3:///p",
		"s3://bucket/a b",
	} {
		_, err := OpenS3(loc, Credentials{})
		if !errors.Is(err, errno.EINVAL) {
			t.Errorf("%s: %v", loc, err)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error shows the secret: %v", loc, err)
		}
	}
	c := Credentials{AccessKeyID: "AKIA", SecretAccessKey: "hunter2"}
	if s := fmt.Sprintf("%v %+v %#v %s", c, c, c, c); strings.Contains(s, "hunter2") || strings.Contains(s, "AKIA") {
		t.Errorf("credentials print as %s", s)
	}
	if Join("s3://b/p?endpoint=http%3A%2F%2Fh%3A1", "t-1") != "s3://b/p/t-1?endpoint=http%3A%2F%2Fh%3A1" {
		t.Errorf("Join = %s", Join("s3://b/p?endpoint=http%3A%2F%2Fh%3A1", "t-1"))
	}
}
