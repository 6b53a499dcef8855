package api_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/api"
)

// vmInfo is the part of a VM answer these tests read.
type vmInfo struct {
	ID        string
	State     string
	Labels    map[string]string
	ExpiresAt *time.Time `json:"expires_at"`
}

func (s *testServer) vmInfo(token, id string) (int, vmInfo) {
	s.t.Helper()
	r := s.do(token, "GET", "/v1/vms/"+id, nil)
	var v vmInfo
	if r.status == http.StatusOK {
		r.json(s.t, &v)
	}
	return r.status, v
}

// pauseStores lists the snapshots in every tenant's pause store under dir.
func pauseSnapshots(t *testing.T, dir string) []*secexec.Snapshot {
	t.Helper()
	stores, err := filepath.Glob(filepath.Join(dir, "p-*"))
	if err != nil {
		t.Fatal(err)
	}
	var all []*secexec.Snapshot
	for _, d := range stores {
		st, err := secexec.OpenSnapshotStore(d)
		if err != nil {
			t.Fatal(err)
		}
		l, err := st.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, l...)
	}
	return all
}

// waitState polls the VM until it is in state, or fails after a bound of
// polls (a readiness poll, not a timed assertion).
func (s *testServer) waitState(token, id, state string) {
	s.t.Helper()
	for range 1500 {
		if code, v := s.vmInfo(token, id); code == http.StatusOK && v.State == state {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("VM %s never reached state %s", id, state)
}

func TestPauseResume(t *testing.T) {
	dir := t.TempDir()
	s := newServer(t, api.Config{SnapshotDir: dir, MaxVMs: 1, MaxPausedVMs: 1})
	id := s.newVM(alice, map[string]any{"labels": map[string]string{"app": "web"}, "env": map[string]string{"A": "1"}})
	if r, res := s.exec(alice, id, map[string]any{"cmd": "echo kept > /workspace/f"}); r.status != 200 || res.ExitCode != 0 {
		t.Fatalf("exec: %d %s", r.status, r.body)
	}
	// A spawned process does not survive the pause.
	if r := s.do(alice, "POST", "/v1/vms/"+id+"/processes", map[string]any{"argv": []string{"cat"}}); r.status != http.StatusCreated {
		t.Fatalf("spawn: %d %s", r.status, r.body)
	}
	r := s.do(alice, "POST", "/v1/vms/"+id+"/pause", map[string]any{"restart": [][]string{{"sh", "-c", "echo restarted > /tmp/r"}}})
	var v vmInfo
	if r.status != http.StatusOK {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	if r.json(t, &v); v.State != "paused" || v.Labels["app"] != "web" {
		t.Fatalf("paused VM = %+v", v)
	}
	// Pausing again does nothing; GET and the list leave it paused.
	if r := s.do(alice, "POST", "/v1/vms/"+id+"/pause", nil); r.status != http.StatusOK {
		t.Fatalf("second pause: %d %s", r.status, r.body)
	}
	if _, v := s.vmInfo(alice, id); v.State != "paused" {
		t.Fatalf("GET resumed it: %+v", v)
	}
	// Its pause snapshot is not among the tenant's snapshots.
	var snaps struct{ Snapshots []snapshotJSON }
	s.do(alice, "GET", "/v1/snapshots", nil).json(t, &snaps)
	if len(snaps.Snapshots) != 0 || len(pauseSnapshots(t, dir)) != 1 {
		t.Fatalf("tenant snapshots %+v, pause snapshots %d", snaps, len(pauseSnapshots(t, dir)))
	}
	// A paused VM does not count against the running-VM quota (1), but
	// the paused-VM quota (1) is full.
	other := s.newVM(alice, nil)
	if r := s.do(alice, "POST", "/v1/vms/"+other+"/pause", nil); r.status != http.StatusTooManyRequests || r.errCode(t) != "quota_exceeded" {
		t.Fatalf("pause over the paused quota: %d %s", r.status, r.body)
	}
	// ...so resuming it now would exceed the running quota.
	if r, _ := s.exec(alice, id, map[string]any{"cmd": "true"}); r.status != http.StatusTooManyRequests || r.errCode(t) != "quota_exceeded" {
		t.Fatalf("resume over the quota: %d %s", r.status, r.body)
	}
	if _, v := s.vmInfo(alice, id); v.State != "paused" {
		t.Fatalf("a refused resume changed it: %+v", v)
	}
	s.do(alice, "DELETE", "/v1/vms/"+other, nil)

	// Another tenant: as absent as ever, and does not resume it.
	for _, rq := range []struct{ method, path string }{
		{"GET", ""}, {"POST", "/resume"}, {"POST", "/pause"}, {"PATCH", ""}, {"POST", "/exec"}, {"DELETE", ""},
	} {
		if r := s.do(bob, rq.method, "/v1/vms/"+id+rq.path, map[string]any{}); r.status != http.StatusNotFound || r.errCode(t) != "not_found" {
			t.Errorf("bob %s %s: %d %s", rq.method, rq.path, r.status, r.body)
		}
	}
	if _, v := s.vmInfo(alice, id); v.State != "paused" {
		t.Fatalf("bob's requests changed it: %+v", v)
	}

	// Concurrent requests to the paused VM share one resume; files, env
	// and labels are intact.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, res := s.exec(alice, id, map[string]any{"cmd": "cat /workspace/f; echo $A"})
			if r.status != 200 || string(res.Stdout) != "kept\n1\n" {
				errs <- fmt.Errorf("exec after pause: %d %q %s", r.status, res.Stdout, r.body)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, v := s.vmInfo(alice, id); v.State != "running" || v.Labels["app"] != "web" {
		t.Fatalf("resumed VM = %+v", v)
	}
	var procs struct{ Processes []struct{ Pid int } }
	if s.do(alice, "GET", "/v1/vms/"+id+"/processes", nil).json(t, &procs); len(procs.Processes) != 0 {
		t.Fatalf("processes after the pause: %+v", procs)
	}
	// The restart command ran again in the resumed VM.
	for i := 0; ; i++ {
		if _, res := s.exec(alice, id, map[string]any{"cmd": "cat /tmp/r"}); string(res.Stdout) == "restarted\n" {
			break
		}
		if i == 500 {
			t.Fatal("the restart command never ran")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// /resume of a running VM answers it as it is.
	if r := s.do(alice, "POST", "/v1/vms/"+id+"/resume", nil); r.status != http.StatusOK {
		t.Fatalf("resume: %d %s", r.status, r.body)
	}
	// Pause, /resume explicitly, then delete while paused: the pause
	// snapshots go with it.
	s.do(alice, "POST", "/v1/vms/"+id+"/pause", nil)
	if r := s.do(alice, "POST", "/v1/vms/"+id+"/resume", nil); r.status != http.StatusOK || !contains(r.body, `"running"`) {
		t.Fatalf("resume: %d %s", r.status, r.body)
	}
	s.do(alice, "POST", "/v1/vms/"+id+"/pause", nil)
	if r := s.do(alice, "DELETE", "/v1/vms/"+id, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete paused: %d %s", r.status, r.body)
	}
	if n := len(pauseSnapshots(t, dir)); n != 0 {
		t.Fatalf("%d pause snapshots left after delete", n)
	}
	if r, _ := s.exec(alice, id, map[string]any{"cmd": "true"}); r.status != http.StatusNotFound {
		t.Fatalf("exec after delete: %d %s", r.status, r.body)
	}
}

// TestPauseBusyVM: a VM another request is using is not paused (409).
func TestPauseBusyVM(t *testing.T) {
	s := newServer(t, api.Config{SnapshotDir: t.TempDir()})
	id := s.newVM(alice, nil)
	req, err := http.NewRequest("GET", s.url+"/v1/vms/"+id+"/watch?path=/workspace", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+alice)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch: %d", resp.StatusCode)
	}
	if r := s.do(alice, "POST", "/v1/vms/"+id+"/pause", nil); r.status != http.StatusConflict || r.errCode(t) != "conflict" {
		t.Fatalf("pause mid-watch: %d %s", r.status, r.body)
	}
	resp.Body.Close()
	// Once the watch has ended, the pause goes through.
	for i := 0; ; i++ {
		r := s.do(alice, "POST", "/v1/vms/"+id+"/pause", nil)
		if r.status == http.StatusOK {
			break
		}
		if r.status != http.StatusConflict || i == 500 {
			t.Fatalf("pause after the watch: %d %s", r.status, r.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A watch of the paused VM resumes it.
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch of a paused VM: %d", resp.StatusCode)
	}
	s.do(alice, "PUT", "/v1/vms/"+id+"/files/workspace/new", []byte("x"))
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "event: change\n" {
		t.Fatalf("watch event: %q %v", line, err)
	}
}

// TestIdleVMsArePaused: with OnIdle pause, an idle VM is paused, not
// closed, and its next request resumes it.
func TestIdleVMsArePaused(t *testing.T) {
	if _, err := api.New(api.Config{Tokens: testTokens(), OnIdle: api.OnIdlePause}); err == nil {
		t.Fatal("on-idle pause without a snapshot directory accepted")
	}
	if _, err := api.New(api.Config{Tokens: testTokens(), OnIdle: "sleep"}); err == nil {
		t.Fatal("on-idle sleep accepted")
	}
	s := newServer(t, api.Config{SnapshotDir: t.TempDir(), OnIdle: api.OnIdlePause})
	id := s.newVM(alice, map[string]any{"idle_timeout_ms": 100})
	if r := s.do(alice, "PUT", "/v1/vms/"+id+"/files/workspace/f", []byte("idle\n")); r.status != http.StatusNoContent {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	// Polled through the list: a request on the VM itself would use it
	// and so keep it from ever being idle.
	for i := 0; ; i++ {
		var list struct{ VMs []vmInfo }
		s.do(alice, "GET", "/v1/vms?state=paused", nil).json(t, &list)
		if len(list.VMs) == 1 && list.VMs[0].ID == id {
			break
		}
		if len(list.VMs) != 0 || i == 1500 {
			t.Fatalf("paused list = %+v", list)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := s.do(alice, "GET", "/v1/vms/"+id+"/files/workspace/f", nil); r.status != 200 || string(r.body) != "idle\n" {
		t.Fatalf("read after idle pause: %d %q", r.status, r.body)
	}
}

func TestVMTTL(t *testing.T) {
	dir := t.TempDir()
	s := newServer(t, api.Config{SnapshotDir: dir, MaxTTL: time.Hour})
	if r := s.do(alice, "POST", "/v1/vms", map[string]any{"ttl_ms": 2 * time.Hour.Milliseconds()}); r.status != http.StatusBadRequest {
		t.Fatalf("ttl over the maximum: %d %s", r.status, r.body)
	}
	if r := s.do(alice, "POST", "/v1/vms", map[string]any{"ttl_ms": -1}); r.status != http.StatusBadRequest {
		t.Fatalf("negative ttl: %d %s", r.status, r.body)
	}
	// A paused VM past its TTL is closed and its pause snapshot deleted.
	short := s.newVM(alice, map[string]any{"ttl_ms": 300})
	if r := s.do(alice, "POST", "/v1/vms/"+short+"/pause", nil); r.status != http.StatusOK && r.status != http.StatusNotFound {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	for i := 0; ; i++ {
		if code, _ := s.vmInfo(alice, short); code == http.StatusNotFound {
			break
		}
		if i == 1500 {
			t.Fatal("the VM outlived its TTL")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(pauseSnapshots(t, dir)); n != 0 {
		t.Fatalf("%d pause snapshots left after the TTL", n)
	}

	// PATCH extends it, bounded by the maximum; 0 removes it.
	id := s.newVM(alice, map[string]any{"ttl_ms": 60_000})
	_, v := s.vmInfo(alice, id)
	if v.ExpiresAt == nil {
		t.Fatalf("no expires_at: %+v", v)
	}
	first := *v.ExpiresAt
	r := s.do(alice, "PATCH", "/v1/vms/"+id, map[string]any{"ttl_ms": 30 * 60_000})
	if r.status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.status, r.body)
	}
	r.json(t, &v)
	if v.ExpiresAt == nil || !v.ExpiresAt.After(first) {
		t.Fatalf("patched expires_at %v, was %v", v.ExpiresAt, first)
	}
	for _, bad := range []any{map[string]any{"ttl_ms": 2 * time.Hour.Milliseconds()}, map[string]any{"ttl_ms": -5}, map[string]any{"what": 1}, nil} {
		if r := s.do(alice, "PATCH", "/v1/vms/"+id, bad); r.status != http.StatusBadRequest {
			t.Errorf("patch %v: %d %s", bad, r.status, r.body)
		}
	}
	r = s.do(alice, "PATCH", "/v1/vms/"+id, map[string]any{"ttl_ms": 0})
	var none vmInfo
	if r.json(t, &none); r.status != http.StatusOK || none.ExpiresAt != nil {
		t.Fatalf("ttl 0: %d %s", r.status, r.body)
	}
}

func TestVMLabels(t *testing.T) {
	s := newServer(t, api.Config{SnapshotDir: t.TempDir()})
	web := s.newVM(alice, map[string]any{"labels": map[string]string{"app": "web", "team": "a"}})
	db := s.newVM(alice, map[string]any{"labels": map[string]string{"app": "db", "team": "a"}})
	s.newVM(bob, map[string]any{"labels": map[string]string{"app": "web", "team": "a"}})
	list := func(token, query string) []string {
		t.Helper()
		r := s.do(token, "GET", "/v1/vms"+query, nil)
		if r.status != http.StatusOK {
			t.Fatalf("list %s: %d %s", query, r.status, r.body)
		}
		var l struct{ VMs []vmInfo }
		r.json(t, &l)
		var ids []string
		for _, v := range l.VMs {
			ids = append(ids, v.ID)
		}
		return ids
	}
	if got := list(alice, "?label=app=web"); len(got) != 1 || got[0] != web {
		t.Errorf("app=web: %v", got)
	}
	if got := list(alice, "?label=team=a"); len(got) != 2 {
		t.Errorf("team=a: %v", got)
	}
	if got := list(alice, "?label=team=a&label=app=db"); len(got) != 1 || got[0] != db {
		t.Errorf("team=a,app=db: %v", got)
	}
	if got := list(alice, "?label=team=b"); len(got) != 0 {
		t.Errorf("team=b: %v", got)
	}
	if r := s.do(alice, "POST", "/v1/vms/"+db+"/pause", nil); r.status != http.StatusOK {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	if got := list(alice, "?label=team=a&state=paused"); len(got) != 1 || got[0] != db {
		t.Errorf("paused: %v", got)
	}
	if got := list(alice, "?state=running"); len(got) != 1 || got[0] != web {
		t.Errorf("running: %v", got)
	}
	// PATCH replaces the labels, and leaves a paused VM paused.
	r := s.do(alice, "PATCH", "/v1/vms/"+db, map[string]any{"labels": map[string]string{"app": "db2"}})
	var v vmInfo
	if r.json(t, &v); r.status != http.StatusOK || v.State != "paused" || len(v.Labels) != 1 || v.Labels["app"] != "db2" {
		t.Fatalf("patch labels: %d %s", r.status, r.body)
	}
	if got := list(alice, "?label=app=db2"); len(got) != 1 || got[0] != db {
		t.Errorf("app=db2: %v", got)
	}
	// Bounds.
	many := map[string]string{}
	for i := range 33 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	long := string(make([]byte, 300))
	for _, bad := range []map[string]string{many, {"Up": "x"}, {"": "x"}, {"-a": "x"}, {"k": long}, {string(make([]byte, 64)): "x"}} {
		if r := s.do(alice, "POST", "/v1/vms", map[string]any{"labels": bad}); r.status != http.StatusBadRequest {
			t.Errorf("create with labels %.40v: %d %s", bad, r.status, r.body)
		}
		if r := s.do(alice, "PATCH", "/v1/vms/"+web, map[string]any{"labels": bad}); r.status != http.StatusBadRequest {
			t.Errorf("patch labels %.40v: %d %s", bad, r.status, r.body)
		}
	}
	for _, q := range []string{"?state=gone", "?label=novalue", "?label==x"} {
		if r := s.do(alice, "GET", "/v1/vms"+q, nil); r.status != http.StatusBadRequest {
			t.Errorf("list %s: %d %s", q, r.status, r.body)
		}
	}
}

// TestPauseAfterEngineLoss: a VM whose engine died cannot be paused, and
// the snapshot of its earlier pause is still there, intact.
func TestPauseAfterEngineLoss(t *testing.T) {
	dir := t.TempDir()
	s := newServer(t, api.Config{SnapshotDir: dir})
	id := s.newVM(alice, map[string]any{"engine": "per-vm"})
	s.do(alice, "PUT", "/v1/vms/"+id+"/files/workspace/f", []byte("first\n"))
	if r := s.do(alice, "POST", "/v1/vms/"+id+"/pause", nil); r.status != http.StatusOK {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	if r, _ := s.exec(alice, id, map[string]any{"cmd": "echo second > /workspace/f"}); r.status != 200 {
		t.Fatalf("exec: %d %s", r.status, r.body)
	}
	r, _ := s.exec(alice, id, map[string]any{"argv": []string{"node", "-e", "new Array(2e8).fill(1.5)"}})
	if r.status != http.StatusServiceUnavailable || r.errCode(t) != "engine_lost" {
		t.Fatalf("fatal OOM: %d %s; want 503 engine_lost", r.status, r.body)
	}
	s.waitState(alice, id, "lost")
	if r := s.do(alice, "POST", "/v1/vms/"+id+"/pause", nil); r.status != http.StatusConflict {
		t.Fatalf("pause of a lost VM: %d %s", r.status, r.body)
	}
	snaps := pauseSnapshots(t, dir)
	if len(snaps) != 1 {
		t.Fatalf("%d pause snapshots, want the earlier one", len(snaps))
	}
	// It restores, verified, with the files of the earlier pause.
	vm, err := secexec.NewVM(context.Background(), secexec.Options{From: snaps[0]})
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Close()
	b, err := vm.FS().ReadFile(context.Background(), "/workspace/f")
	if err != nil || string(b) != "first\n" {
		t.Fatalf("earlier pause snapshot: %q %v", b, err)
	}
}

// BenchmarkPauseResume: one pause and the transparent resume of the next
// exec, for a VM with a few files.
func BenchmarkPauseResume(b *testing.B) {
	s := newServer(b, api.Config{SnapshotDir: b.TempDir()})
	// Another VM of the tenant keeps its engine process: a resume
	// starts a VM in it, not an engine.
	s.newVM(alice, nil)
	id := s.newVM(alice, nil)
	if r, _ := s.exec(alice, id, map[string]any{"cmd": "mkdir -p /workspace/d; for i in 1 2 3 4 5 6 7 8 9 10; do echo $i > /workspace/d/$i; done"}); r.status != 200 {
		b.Fatalf("exec: %d %s", r.status, r.body)
	}
	var pause, resume time.Duration
	for b.Loop() {
		t0 := time.Now()
		if r := s.do(alice, "POST", "/v1/vms/"+id+"/pause", nil); r.status != http.StatusOK {
			b.Fatalf("pause: %d %s", r.status, r.body)
		}
		t1 := time.Now()
		if r := s.do(alice, "GET", "/v1/vms/"+id+"/files/workspace/d/1", nil); r.status != http.StatusOK {
			b.Fatalf("read: %d %s", r.status, r.body)
		}
		pause, resume = pause+t1.Sub(t0), resume+time.Since(t1)
	}
	b.ReportMetric(float64(pause.Milliseconds())/float64(b.N), "pause-ms/op")
	b.ReportMetric(float64(resume.Milliseconds())/float64(b.N), "resume-ms/op")
}

// TestPausedPreviewResumes: a preview URL of a paused VM resumes it, and
// the restart list brings its server back.
func TestPausedPreviewResumes(t *testing.T) {
	s := newServer(t, api.Config{SnapshotDir: t.TempDir()})
	id := s.newVM(alice, nil)
	startPortServer(t, s, id)
	r := s.do(alice, "POST", "/v1/vms/"+id+"/previews", map[string]any{"port": 3000})
	if r.status != http.StatusCreated {
		t.Fatalf("preview: %d %s", r.status, r.body)
	}
	var pv struct{ URL string }
	r.json(t, &pv)
	if r := s.do(alice, "POST", "/v1/vms/"+id+"/pause", map[string]any{"restart": [][]string{{"node", "/workspace/srv.js"}}}); r.status != http.StatusOK {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	// The first request resumes the VM; the restarted server answers
	// once it listens (a readiness loop).
	for i := 0; ; i++ {
		resp, err := http.Get(pv.URL + "hello")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			if !contains(body, "GET /hello") {
				t.Fatalf("preview answer %q", body)
			}
			break
		}
		if i == 600 {
			t.Fatalf("the preview never answered after the pause: %d %s", resp.StatusCode, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, v := s.vmInfo(alice, id); v.State != "running" {
		t.Fatalf("after the preview: %+v", v)
	}
}

// TestPauseAfterSessionExit: a client that has read a process's exit frame
// may pause the VM at once, before the session's closing handshake ends
// (the TypeScript client's close() then pause() failed 409 by this race).
// The client here never answers the close, so the server's handshake
// waits on it for as long as the old code held the VM.
func TestPauseAfterSessionExit(t *testing.T) {
	s := newServer(t, api.Config{SnapshotDir: t.TempDir()})
	id := s.newVM(alice, nil)
	pid := spawn(t, s, id, map[string]any{"cmd": "echo done"})
	c, _, err := dialProcess(t, s, alice, id, pid)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("session ended without an exit frame: %v", err)
		}
		if len(msg) > 0 && msg[0] == api.TagExit {
			break
		}
	}
	if r := s.do(alice, "POST", "/v1/vms/"+id+"/pause", nil); r.status != http.StatusOK {
		t.Fatalf("pause after the exit frame: %d %s", r.status, r.body)
	}
	s.waitState(alice, id, "paused")
}
