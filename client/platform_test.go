package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/client"
	"github.com/secexec/secexec/internal/api"
)

// Snapshots, restore and fork through the client, against a real server
// with a snapshot store; another tenant sees none of them.
func TestSnapshotsAndFork(t *testing.T) {
	s := newServer(t, api.Config{SnapshotDir: t.TempDir()})
	ctx := context.Background()
	c := s.client(t, alice, client.Options{})
	vm := newVM(t, c, client.VMOptions{Env: map[string]string{"GREETING": "hi"}})
	if err := vm.FS().WriteFile(ctx, "/workspace/a.txt", []byte("one")); err != nil {
		t.Fatal(err)
	}
	snap, err := vm.Snapshot(ctx, client.SnapshotOptions{Labels: map[string]string{"step": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if snap.ID == "" || snap.Files == 0 || snap.Labels["step"] != "1" {
		t.Fatalf("snapshot: %+v", snap)
	}
	list, err := c.ListSnapshots(ctx)
	if err != nil || len(list) != 1 || list[0].ID != snap.ID {
		t.Fatalf("list: %+v %v", list, err)
	}
	if got, err := c.Snapshot(ctx, snap.ID); err != nil || got.ID != snap.ID {
		t.Fatalf("get: %+v %v", got, err)
	}
	// Changes after the snapshot are not in it.
	if err := vm.FS().WriteFile(ctx, "/workspace/a.txt", []byte("two")); err != nil {
		t.Fatal(err)
	}
	restored := newVM(t, c, client.VMOptions{FromSnapshot: snap.ID})
	res, err := restored.Exec(ctx, `cat /workspace/a.txt; echo " $GREETING"`, nil)
	if err != nil || string(res.Stdout) != "one hi\n" {
		t.Fatalf("restored: %q %v", res.Stdout, err)
	}

	// A fork starts with the parent's files; writes on either side stay
	// on that side.
	child, err := vm.Fork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Close() })
	if child.ID() == vm.ID() {
		t.Fatal("the fork has its parent's id")
	}
	if err := child.FS().WriteFile(ctx, "/workspace/a.txt", []byte("child")); err != nil {
		t.Fatal(err)
	}
	if err := vm.FS().WriteFile(ctx, "/workspace/b.txt", []byte("parent")); err != nil {
		t.Fatal(err)
	}
	if got, err := vm.FS().ReadFile(ctx, "/workspace/a.txt"); err != nil || string(got) != "two" {
		t.Fatalf("parent after the child wrote: %q %v", got, err)
	}
	if _, err := child.FS().ReadFile(ctx, "/workspace/b.txt"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("child sees the parent's new file: %v", err)
	}

	// Another tenant: not found, for the snapshot and for forking.
	other := s.client(t, bob, client.Options{})
	if _, err := other.Snapshot(ctx, snap.ID); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("bob reads alice's snapshot: %v", err)
	}
	if _, err := other.VM(vm.ID()).Fork(ctx); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("bob forks alice's VM: %v", err)
	}
	if _, err := other.NewVM(ctx, client.VMOptions{FromSnapshot: snap.ID}); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("bob restores alice's snapshot: %v", err)
	}
	if err := c.DeleteSnapshot(ctx, snap.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Snapshot(ctx, snap.ID); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("deleted snapshot: %v", err)
	}
}

// A preview opens a guest server with no credentials until revoked.
func TestPreview(t *testing.T) {
	s := newServer(t, api.Config{})
	ctx := context.Background()
	c := s.client(t, alice, client.Options{})
	vm := newVM(t, c, client.VMOptions{})
	if _, err := vm.Preview(ctx, 3000, time.Minute); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("preview of a closed port: %v", err)
	}
	const srv = `require('http').createServer((q, r) => r.end('hello ' + q.url)).listen(3000, () => console.log('ready'))`
	p, err := vm.Spawn(ctx, []string{"node", "-e", srv}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	buf := make([]byte, 6)
	if _, err := io.ReadFull(p.Stdout, buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("guest server: %q %v", buf, err)
	}
	pv, err := vm.Preview(ctx, 3000, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if pv.Port != 3000 || pv.ID == "" || time.Until(pv.ExpiresAt) > 2*time.Minute || !strings.HasPrefix(pv.URL, s.url) {
		t.Fatalf("preview: %+v", pv)
	}
	get := func() (int, string) {
		resp, err := http.Get(pv.URL + "x?y=1")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(); code != 200 || body != "hello /x?y=1" {
		t.Fatalf("preview GET: %d %q", code, body)
	}
	if err := vm.RevokePreview(ctx, pv.ID); err != nil {
		t.Fatal(err)
	}
	if code, _ := get(); code != http.StatusNotFound {
		t.Fatalf("revoked preview: %d", code)
	}
}

// A watch streams the VM's file changes and ends when the VM closes.
func TestWatch(t *testing.T) {
	s := newServer(t, api.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := s.client(t, alice, client.Options{})
	vm, err := c.NewVM(ctx, client.VMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := vm.FS().Watch(ctx, "/workspace", true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := vm.Exec(ctx, "mkdir -p d && echo x > d/f && rm d/f", nil); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for len(seen) < 3 {
		ev, err := w.Next(ctx)
		if err != nil {
			t.Fatalf("after %v: %v", seen, err)
		}
		switch {
		case ev.Op == "create" && ev.Name == "d" && ev.IsDir, ev.Op == "create" && ev.Name == "d/f", ev.Op == "remove" && ev.Name == "d/f":
			seen = append(seen, ev.Op+" "+ev.Name)
		}
	}
	if _, err := c.VM(vm.ID()).FS().Watch(ctx, "/missing", false); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("watch of a missing path: %v", err)
	}
	if err := vm.Close(); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := w.Next(ctx); err != nil {
			if err != io.EOF {
				t.Fatalf("after the VM closed: %v", err)
			}
			break
		}
	}
}

// Pause and resume, TTL and labels through the client, against a real
// server.
func TestPauseTTLAndLabels(t *testing.T) {
	s := newServer(t, api.Config{SnapshotDir: t.TempDir()})
	ctx := context.Background()
	c := s.client(t, alice, client.Options{})
	vm := newVM(t, c, client.VMOptions{Labels: map[string]string{"app": "web"}, TTL: time.Hour})
	other := newVM(t, c, client.VMOptions{Labels: map[string]string{"app": "db"}})
	info, err := vm.Info(ctx)
	if err != nil || info.Labels["app"] != "web" || info.ExpiresAt.IsZero() {
		t.Fatalf("info: %+v %v", info, err)
	}
	if err := vm.FS().WriteFile(ctx, "/workspace/a.txt", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if info, err = vm.Pause(ctx, client.PauseOptions{}); err != nil || info.State != "paused" {
		t.Fatalf("pause: %+v %v", info, err)
	}
	paused, err := c.FindVMs(ctx, client.VMFilter{State: "paused"})
	if err != nil || len(paused) != 1 || paused[0].ID != vm.ID() {
		t.Fatalf("paused VMs: %+v %v", paused, err)
	}
	// Another tenant cannot resume it.
	if _, err := s.client(t, bob, client.Options{}).VM(vm.ID()).Resume(ctx); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("bob resumes alice's VM: %v", err)
	}
	// A call resumes it transparently.
	if b, err := vm.FS().ReadFile(ctx, "/workspace/a.txt"); err != nil || string(b) != "one" {
		t.Fatalf("read after pause: %q %v", b, err)
	}
	if info, err = vm.Info(ctx); err != nil || info.State != "running" {
		t.Fatalf("after the read: %+v %v", info, err)
	}
	if _, err := vm.Pause(ctx, client.PauseOptions{Restart: [][]string{{"true"}}}); err != nil {
		t.Fatal(err)
	}
	if info, err = vm.Resume(ctx); err != nil || info.State != "running" {
		t.Fatalf("resume: %+v %v", info, err)
	}

	// TTL and labels.
	before := info.ExpiresAt
	if info, err = vm.SetTTL(ctx, 2*time.Hour); err != nil || !info.ExpiresAt.After(before) {
		t.Fatalf("set TTL: %+v %v", info, err)
	}
	if info, err = vm.SetTTL(ctx, 0); err != nil || !info.ExpiresAt.IsZero() {
		t.Fatalf("no TTL: %+v %v", info, err)
	}
	if _, err := vm.SetTTL(ctx, 30*24*time.Hour); !errors.Is(err, client.ErrBadRequest) {
		t.Fatalf("TTL over the maximum: %v", err)
	}
	if info, err = vm.SetLabels(ctx, map[string]string{"app": "api", "team": "a"}); err != nil || len(info.Labels) != 2 {
		t.Fatalf("set labels: %+v %v", info, err)
	}
	found, err := c.FindVMs(ctx, client.VMFilter{Labels: map[string]string{"app": "api", "team": "a"}})
	if err != nil || len(found) != 1 || found[0].ID != vm.ID() {
		t.Fatalf("find app=api,team=a: %+v %v", found, err)
	}
	found, err = c.FindVMs(ctx, client.VMFilter{Labels: map[string]string{"app": "db"}, State: "running"})
	if err != nil || len(found) != 1 || found[0].ID != other.ID() {
		t.Fatalf("find app=db: %+v %v", found, err)
	}
	if info, err = vm.SetLabels(ctx, map[string]string{}); err != nil || len(info.Labels) != 0 {
		t.Fatalf("clear labels: %+v %v", info, err)
	}
	if _, err := vm.SetLabels(ctx, map[string]string{"Bad Key": "x"}); !errors.Is(err, client.ErrBadRequest) {
		t.Fatalf("bad label: %v", err)
	}
}
