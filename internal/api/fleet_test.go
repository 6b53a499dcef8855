package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/api"
	"github.com/secexec/secexec/internal/s3test"
	"github.com/secexec/secexec/internal/snapshot"
)

// TestForwardingToOwningReplica: two replicas, each forwarding requests
// for the other's VMs; a client may talk to either.
func TestForwardingToOwningReplica(t *testing.T) {
	a, b := replicaPair(t)
	id := a.newVM(alice, nil)
	if id[:2] != "a-" {
		t.Fatalf("id %q does not name its replica", id)
	}
	r, res := b.exec(alice, id, map[string]any{"cmd": "echo via b"})
	if r.status != 200 || string(res.Stdout) != "via b\n" {
		t.Fatalf("exec through b: %d %s", r.status, r.body)
	}
	evs := readSSE(t, b, "/v1/vms/"+id+"/exec", map[string]any{"cmd": "echo streamed"})
	if len(evs) < 2 || decodeData(t, evs[0]) != "streamed\n" {
		t.Fatalf("SSE through b: %v", evs)
	}
	// Tenancy holds across replicas.
	if r := b.do(bob, "GET", "/v1/vms/"+id, nil); r.status != http.StatusNotFound {
		t.Fatalf("bob through b: %d", r.status)
	}
	// An unknown replica, and a VM that is not where its id says.
	if r := b.do(alice, "GET", "/v1/vms/c-aaaaaaaaaaaaaaaa", nil); r.status != http.StatusMisdirectedRequest {
		t.Fatalf("unknown replica: %d", r.status)
	}
	if r := b.do(alice, "GET", "/v1/vms/a-aaaaaaaaaaaaaaaa", nil); r.status != http.StatusNotFound {
		t.Fatalf("missing VM on a: %d", r.status)
	}
	// A forwarded request is not forwarded again (no loops).
	if r := a.do(alice, "GET", "/v1/vms/b-aaaaaaaaaaaaaaaa", nil, "X-Secexec-Forwarded", "b"); r.status != http.StatusMisdirectedRequest {
		t.Fatalf("second hop: %d", r.status)
	}
}

// TestForwardingWebSocket: a process session through the replica that
// does not hold the VM.
func TestForwardingWebSocket(t *testing.T) {
	a, b := replicaPair(t)
	id := a.newVM(alice, nil)
	pid := spawn(t, b, id, map[string]any{"cmd": "echo through; exit 3"})
	c, _, err := dialProcess(t, b, alice, id, pid)
	if err != nil {
		t.Fatal(err)
	}
	out, _, exit := session(t, c)
	if out != "through\n" || exit["exit_code"] != float64(3) {
		t.Fatalf("stdout %q exit %v", out, exit)
	}
	// A browser's session, the token in a subprotocol, goes through too:
	// the peer gets it as the header it checks.
	pid = spawn(t, b, id, map[string]any{"cmd": "echo browser"})
	c, resp, err := dialSubprotocol(context.Background(), b, []string{api.SubprotocolV1, tokenProtocol(alice)}, id, pid)
	if err != nil {
		t.Fatal(err)
	}
	if p := resp.Header.Get("Sec-WebSocket-Protocol"); p != api.SubprotocolV1 {
		t.Fatalf("answered subprotocol %q", p)
	}
	if out, _, _ := session(t, c); out != "browser\n" {
		t.Fatalf("stdout %q", out)
	}
}

// replicaPair starts replicas "a" and "b", each forwarding to the other,
// sharing a preview secret as a fleet's replicas must.
func replicaPair(t *testing.T) (a, b *testServer) {
	urls := map[string]string{}
	peer := func(r string) (string, bool) { u, ok := urls[r]; return u, ok }
	secret := []byte("a fleet's shared preview secret, 32 bytes or more")
	a = newServer(t, api.Config{Replica: "a", PeerURL: peer, PreviewSecret: secret})
	b = newServer(t, api.Config{Replica: "b", PeerURL: peer, PreviewSecret: secret})
	urls["a"], urls["b"] = a.url, b.url
	return a, b
}

// TestFleetResumesOnAnotherReplica: two replicas share an S3 store
// (a real versitygw); a VM made on A is saved by --snapshot-every, A
// dies (listener and engines gone), and a request for the VM through B
// adopts it: B restores it from A's last save, with its files, for its
// tenant only. When A comes back it does not run the VM again: it
// forwards the VM's requests to B, the owner the store names now (those
// another replica forwarded to it, too).
func TestFleetResumesOnAnotherReplica(t *testing.T) {
	f := newFleet(t, "fleet", "")
	a, b := f.replica("a", 200*time.Millisecond), f.replica("b", 200*time.Millisecond)
	id := a.newVM(alice, map[string]any{"labels": map[string]string{"app": "web"}})
	if r, res := a.exec(alice, id, map[string]any{"cmd": "echo kept > /workspace/f"}); r.status != 200 || res.ExitCode != 0 {
		t.Fatalf("exec on a: %d %s", r.status, r.body)
	}
	wrote := time.Now()
	a.touch(id)
	recs := f.records()
	rec := waitRecord(t, recs, id, func(r fleetRecord) bool { return r.Owner == "a" && r.SavedAt.After(wrote) })
	if rec.State != "running" {
		t.Fatalf("a's save: %+v", rec)
	}
	a.kill()

	// Through b: the VM is adopted, paused, then resumed by the exec.
	if code, v := b.vmInfo(alice, id); code != http.StatusOK || v.State != "paused" || v.Labels["app"] != "web" {
		t.Fatalf("GET through b after a died: %d %+v", code, v)
	}
	if r := b.do(bob, "POST", "/v1/vms/"+id+"/exec", map[string]any{"cmd": "true"}); r.status != http.StatusNotFound {
		t.Fatalf("bob through b: %d %s", r.status, r.body)
	}
	r, res := b.exec(alice, id, map[string]any{"cmd": "cat /workspace/f"})
	if r.status != 200 || string(res.Stdout) != "kept\n" {
		t.Fatalf("exec through b: %d %q %s", r.status, res.Stdout, r.body)
	}
	if rec := waitRecord(t, recs, id, func(r fleetRecord) bool { return true }); rec.Owner != "b" {
		t.Fatalf("the record names %q, not b", rec.Owner)
	}
	if r, _ := b.exec(alice, id, map[string]any{"cmd": "echo on-b > /workspace/g"}); r.status != 200 {
		t.Fatalf("exec through b: %d %s", r.status, r.body)
	}

	// a comes back: it leaves the VM to b and sends its requests there.
	a2 := f.replica("a", 0)
	var list struct{ VMs []vmInfo }
	if a2.do(alice, "GET", "/v1/vms", nil).json(t, &list); len(list.VMs) != 0 {
		t.Fatalf("a loaded the VM b owns: %+v", list)
	}
	r, res = a2.exec(alice, id, map[string]any{"cmd": "cat /workspace/f /workspace/g"})
	if r.status != 200 || string(res.Stdout) != "kept\non-b\n" {
		t.Fatalf("exec through the new a: %d %q %s", r.status, res.Stdout, r.body)
	}
	if r := a2.do(bob, "GET", "/v1/vms/"+id, nil); r.status != http.StatusNotFound {
		t.Fatalf("bob through the new a: %d %s", r.status, r.body)
	}
	// A third replica sends the request where the id says, to a, which
	// passes it on to b, once more.
	c := f.replica("c", 0)
	if r, res := c.exec(alice, id, map[string]any{"cmd": "cat /workspace/g"}); r.status != 200 || string(res.Stdout) != "on-b\n" {
		t.Fatalf("exec through c: %d %q %s", r.status, res.Stdout, r.body)
	}
	// Deleted through a, it is gone from the store.
	if r := a2.do(alice, "DELETE", "/v1/vms/"+id, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete through a: %d %s", r.status, r.body)
	}
	if _, _, err := recs.GetRecord(context.Background(), recordKey(t, recs, id)); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatalf("the record after delete: %v", err)
	}
}

// fleet is replicas sharing a snapshot store in a real versitygw.
type fleet struct {
	t     *testing.T
	loc   string
	creds secexec.StoreCredentials
	// cut is a replica the others cannot dial ("" : none).
	cut  string
	mu   sync.Mutex
	urls map[string]string
}

func newFleet(t *testing.T, prefix, cut string) *fleet {
	srv := s3test.Start(t)
	return &fleet{t: t, loc: srv.URL(prefix), creds: secexec.StoreCredentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey},
		cut: cut, urls: map[string]string{}}
}

// replica starts replica name, saving running VMs every every (0: never).
func (f *fleet) replica(name string, every time.Duration) *testServer {
	dead := "http://" + closedAddr(f.t)
	peer := func(r string) (string, bool) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if r == f.cut && name != f.cut {
			return dead, true
		}
		u, ok := f.urls[r]
		return u, ok
	}
	s := newServer(f.t, api.Config{Replica: name, PeerURL: peer, PreviewSecret: []byte("a fleet's shared preview secret, 32 bytes or more"),
		SnapshotStore: f.loc, SnapshotCredentials: f.creds, SnapshotEvery: every})
	f.mu.Lock()
	f.urls[name] = s.url
	f.mu.Unlock()
	return s
}

// records opens the fleet's VM records, as the replicas do.
func (f *fleet) records() snapshot.Records {
	recs, err := snapshot.OpenRecords(f.loc, f.creds)
	if err != nil {
		f.t.Fatal(err)
	}
	return recs
}

// touch uses VM id through s (a GET), so that its next periodic save
// starts after now.
func (s *testServer) touch(id string) {
	s.t.Helper()
	if r := s.do(alice, "GET", "/v1/vms/"+id, nil); r.status != http.StatusOK {
		s.t.Fatalf("GET %s: %d %s", id, r.status, r.body)
	}
}

// fleetRecord is the part of a VM's record in the store the fleet test
// reads.
type fleetRecord struct {
	Owner, State string
	SavedAt      time.Time `json:"saved_at"`
}

// recordKey finds the name of the record of VM id.
func recordKey(t *testing.T, recs snapshot.Records, id string) string {
	t.Helper()
	names, err := recs.ListRecords(context.Background(), "vms/")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, "/"+id) {
			return n
		}
	}
	return "vms/none/" + id
}

// waitRecord polls the store until the record of id satisfies ok (a
// readiness poll with a bound, not a timed assertion).
func waitRecord(t *testing.T, recs snapshot.Records, id string, ok func(fleetRecord) bool) fleetRecord {
	t.Helper()
	for range 1500 {
		data, _, err := recs.GetRecord(context.Background(), recordKey(t, recs, id))
		var rec fleetRecord
		if err == nil && json.Unmarshal(data, &rec) == nil && ok(rec) {
			return rec
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the record of %s never came", id)
	return fleetRecord{}
}

// TestFleetNeverRunsTwoCopies: replica a is alive but the others cannot
// reach it (a partition). Another tenant's request adopts nothing; then b
// and c, asked for a's VM at the same time, both try to adopt it and
// exactly one wins the store's conditional write (the other forwards to
// it). a's next save of the VM is refused by the store, so a drops its
// copy and from then on forwards the VM's requests to the winner.
func TestFleetNeverRunsTwoCopies(t *testing.T) {
	f := newFleet(t, "split", "a") // b and c cannot reach a
	a := f.replica("a", 150*time.Millisecond)
	b, c := f.replica("b", 0), f.replica("c", 0)
	id := a.newVM(alice, nil)
	if r, _ := a.exec(alice, id, map[string]any{"cmd": "echo from-a > /workspace/f"}); r.status != 200 {
		t.Fatalf("exec on a: %d %s", r.status, r.body)
	}
	wrote := time.Now()
	a.touch(id)
	recs := f.records()
	waitRecord(t, recs, id, func(r fleetRecord) bool { return r.SavedAt.After(wrote) })
	// Another tenant finds nothing to adopt.
	if r := b.do(bob, "POST", "/v1/vms/"+id+"/exec", map[string]any{"cmd": "true"}); r.status != http.StatusNotFound {
		t.Fatalf("bob through b: %d %s", r.status, r.body)
	}
	if rec := waitRecord(t, recs, id, func(fleetRecord) bool { return true }); rec.Owner != "a" {
		t.Fatalf("bob's request moved the VM to %s", rec.Owner)
	}
	// b and c race to adopt it.
	var wg sync.WaitGroup
	outs := make([]string, 6)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := []*testServer{b, c}[i%2]
			r, res := s.exec(alice, id, map[string]any{"cmd": "cat /workspace/f"})
			outs[i] = fmt.Sprintf("%d %s", r.status, res.Stdout)
			if r.status != 200 {
				outs[i] += string(r.body)
			}
		}()
	}
	wg.Wait()
	for i, o := range outs {
		if o != "200 from-a\n" {
			t.Errorf("exec %d through %s: %q", i, []string{"b", "c"}[i%2], o)
		}
	}
	owner := waitRecord(t, recs, id, func(fleetRecord) bool { return true }).Owner
	held := 0
	for _, s := range []*testServer{b, c} {
		var list struct{ VMs []vmInfo }
		s.do(alice, "GET", "/v1/vms", nil).json(t, &list)
		held += len(list.VMs)
	}
	if (owner != "b" && owner != "c") || held != 1 {
		t.Fatalf("owner %q, copies on b and c: %d", owner, held)
	}
	// a's next save is refused: it drops its copy...
	for i := 0; ; i++ {
		var list struct{ VMs []vmInfo }
		if a.do(alice, "GET", "/v1/vms", nil).json(t, &list); len(list.VMs) == 0 {
			break
		}
		if i == 1500 {
			t.Fatal("a kept running the VM another replica owns")
		}
		a.exec(alice, id, map[string]any{"cmd": "true"}) // used: due for a save
		time.Sleep(20 * time.Millisecond)
	}
	// ...and sends the VM's requests to its owner.
	r, res := a.exec(alice, id, map[string]any{"cmd": "cat /workspace/f"})
	if r.status != 200 || string(res.Stdout) != "from-a\n" {
		t.Fatalf("exec through a after it lost the VM: %d %q %s", r.status, res.Stdout, r.body)
	}
	if rec := waitRecord(t, recs, id, func(fleetRecord) bool { return true }); rec.Owner != owner {
		t.Fatalf("owner moved from %s to %s", owner, rec.Owner)
	}
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestFleetListsOrphanedPausedVMs: a replica paused a VM and never came
// back (in Kubernetes a restarted pod has a new name). Another replica's
// list names the VM, paused, and a request for it adopts it. Another
// tenant sees none of it.
func TestFleetListsOrphanedPausedVMs(t *testing.T) {
	f := newFleet(t, "orphans", "")
	a := f.replica("a", 0)
	id := a.newVM(alice, map[string]any{"labels": map[string]string{"app": "orphan"}})
	if r, res := a.exec(alice, id, map[string]any{"cmd": "echo left > /workspace/f"}); r.status != 200 || res.ExitCode != 0 {
		t.Fatalf("exec on a: %d %s", r.status, r.body)
	}
	if r := a.do(alice, "POST", "/v1/vms/"+id+"/pause", nil); r.status != http.StatusOK {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	a.kill()

	d := f.replica("d", 0)
	var list struct{ VMs []vmInfo }
	if r := d.do(alice, "GET", "/v1/vms?state=paused&label=app=orphan", nil); r.status != 200 {
		t.Fatalf("list: %d %s", r.status, r.body)
	} else if r.json(t, &list); len(list.VMs) != 1 || list.VMs[0].ID != id || list.VMs[0].State != "paused" || list.VMs[0].Labels["app"] != "orphan" {
		t.Fatalf("d's list: %+v", list)
	}
	if d.do(alice, "GET", "/v1/vms?state=running", nil).json(t, &list); len(list.VMs) != 0 {
		t.Fatalf("running list: %+v", list)
	}
	if d.do(bob, "GET", "/v1/vms", nil).json(t, &list); len(list.VMs) != 0 {
		t.Fatalf("bob's list: %+v", list)
	}
	r, res := d.exec(alice, id, map[string]any{"cmd": "cat /workspace/f"})
	if r.status != 200 || string(res.Stdout) != "left\n" {
		t.Fatalf("exec through d: %d %q %s", r.status, res.Stdout, r.body)
	}
	// d owns it now: listed once, running.
	if d.do(alice, "GET", "/v1/vms", nil).json(t, &list); len(list.VMs) != 1 || list.VMs[0].State != "running" {
		t.Fatalf("after adoption: %+v", list)
	}
}
