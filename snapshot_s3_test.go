package secexec_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/s3test"
)

// s3SnapshotStore starts a versitygw and opens a snapshot store in it.
func s3SnapshotStore(t testing.TB, prefix string) (*secexec.SnapshotStore, *s3test.Server) {
	t.Helper()
	srv := s3test.Start(t)
	st, err := secexec.OpenSnapshotStoreAt(srv.URL(prefix), secexec.StoreCredentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	return st, srv
}

// TestSnapshotS3 saves VMs to an S3 store and restores them, in every
// engine mode: an engine process reads and writes the bucket itself,
// with the credentials the protocol gave it, which appear in neither
// its command line nor its environment.
func TestSnapshotS3(t *testing.T) {
	ctx := context.Background()
	store, srv := s3SnapshotStore(t, "sdk")
	for _, mode := range engineModes {
		t.Run(mode.String(), func(t *testing.T) {
			vm := newVM(t, secexec.Options{Engine: mode, Permissions: secexec.AllowAll(), Env: map[string]string{"K": "v"},
				Mounts: []secexec.Mount{{Path: "/data"}}})
			r, err := vm.Exec(ctx, `printf one > /workspace/a && printf data > /data/d && echo $K > /tmp/k`, nil)
			if err != nil || r.ExitCode != 0 {
				t.Fatalf("setup: %v %s", err, r.Stderr)
			}
			snap, err := vm.Snapshot(ctx, store, secexec.SnapshotOptions{Labels: map[string]string{"mode": mode.String()}})
			if err != nil {
				t.Fatal(err)
			}
			if mode != secexec.EngineInProcess {
				checkNoSecret(t, srv.SecretKey, srv.PID())
			}
			got, err := store.Get(ctx, snap.ID)
			if err != nil || got.Labels["mode"] != mode.String() {
				t.Fatalf("Get: %+v %v", got, err)
			}
			re := newVM(t, secexec.Options{Engine: mode, From: got})
			r, err = re.Exec(ctx, `cat /workspace/a /data/d /tmp/k; echo $K`, nil)
			if err != nil || string(r.Stdout) != "onedatav\nv\n" {
				t.Fatalf("restored: %v %q %q", err, r.Stdout, r.Stderr)
			}
		})
	}
	list, err := store.List(ctx)
	if err != nil || len(list) != len(engineModes) {
		t.Fatalf("list: %d, %v", len(list), err)
	}
	if err := store.Delete(ctx, list[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get(ctx, list[0].ID); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("deleted snapshot: %v", err)
	}
	// Printing a store does not show its secret.
	if p := fmt.Sprintf("%v %+v %#v", store, *store, store); strings.Contains(p, srv.SecretKey) {
		t.Fatalf("a printed store shows its secret: %s", p)
	}
	// A store with wrong credentials is an error, never a snapshot.
	bad, err := secexec.OpenSnapshotStoreAt(srv.URL("sdk"), secexec.StoreCredentials{AccessKeyID: srv.AccessKey, SecretAccessKey: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	vm := newVM(t, secexec.Options{Engine: secexec.EngineShared})
	if _, err := vm.Snapshot(ctx, bad, secexec.SnapshotOptions{}); err == nil {
		t.Fatal("snapshot with a wrong secret worked")
	}
	if _, err := secexec.NewVM(ctx, secexec.Options{From: &secexec.Snapshot{ID: list[1].ID, Store: bad}}); err == nil {
		t.Fatal("restore with a wrong secret worked")
	}
}

// checkNoSecret fails if any child process of the test but the S3
// server s3pid (so, the engines) has secret in its command line or
// environment.
func checkNoSecret(t *testing.T, secret string, s3pid int) {
	t.Helper()
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	n := 0
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, pid := range strings.Fields(string(b)) {
			if pid == strconv.Itoa(s3pid) {
				continue
			}
			for _, what := range []string{"cmdline", "environ"} {
				data, err := os.ReadFile(filepath.Join("/proc", pid, what))
				if err != nil {
					continue // exited meanwhile
				}
				n++
				if strings.Contains(string(data), secret) {
					t.Fatalf("process %s has the store's secret in its %s", pid, what)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no engine process found to check")
	}
}
