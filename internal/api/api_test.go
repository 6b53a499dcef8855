package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/api"
)

func TestAuthRequired(t *testing.T) {
	s := newServer(t, api.Config{})
	for _, p := range []string{"/healthz", "/readyz", "/openapi.json"} {
		if r := s.do("", "GET", p, nil); r.status != http.StatusOK {
			t.Errorf("GET %s without a token: %d", p, r.status)
		}
	}
	for _, tok := range []string{"", "wrong", alice + "x"} {
		for _, rq := range [][2]string{{"GET", "/v1/vms"}, {"POST", "/v1/vms"}, {"GET", "/metrics"}, {"GET", "/v1/vms/local-aaaaaaaaaaaaaaaa"}} {
			r := s.do(tok, rq[0], rq[1], nil)
			if r.status != http.StatusUnauthorized || r.errCode(t) != "unauthorized" || r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s with token %q: %d %s", rq[0], rq[1], tok, r.status, r.body)
			}
		}
	}
	// Scheme case does not matter; the token does.
	req := s.do("", "GET", "/v1/vms", nil, "Authorization", "bearer "+alice)
	if req.status != http.StatusOK {
		t.Errorf("lower-case bearer: %d", req.status)
	}
	r := s.do(alice, "GET", "/metrics", nil)
	if r.status != http.StatusOK || !contains(r.body, "secexec_api_requests_total") || !contains(r.body, "secexec_runs_total") {
		t.Errorf("metrics: %d %.300s", r.status, r.body)
	}
}

// TestTenantIsolation: a tenant can neither see nor touch another's VM,
// and cannot tell it from one that does not exist.
func TestTenantIsolation(t *testing.T) {
	s := newServer(t, api.Config{})
	id := s.newVM(alice, nil)
	if r, res := s.exec(alice, id, map[string]any{"cmd": "echo hi > /workspace/secret; cat /workspace/secret"}); r.status != 200 || string(res.Stdout) != "hi\n" {
		t.Fatalf("alice exec: %d %s", r.status, r.body)
	}
	never := "local-aaaaaaaaaaaaaaaa"
	for _, vmID := range []string{id, never} {
		for _, rq := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/v1/vms/" + vmID, nil},
			{"POST", "/v1/vms/" + vmID + "/exec", map[string]any{"cmd": "true"}},
			{"GET", "/v1/vms/" + vmID + "/files/workspace/secret", nil},
			{"PUT", "/v1/vms/" + vmID + "/files/workspace/x", []byte("x")},
			{"DELETE", "/v1/vms/" + vmID + "/files/workspace/secret", nil},
			{"GET", "/v1/vms/" + vmID + "/archive?path=/workspace", nil},
			{"POST", "/v1/vms/" + vmID + "/processes", map[string]any{"argv": []string{"cat"}}},
			{"POST", "/v1/vms/" + vmID + "/js/evaluate", map[string]any{"code": "1"}},
			{"GET", "/v1/vms/" + vmID + "/ports/3000/", nil},
			{"POST", "/v1/vms/" + vmID + "/previews", map[string]any{"port": 3000}},
			{"DELETE", "/v1/vms/" + vmID + "/previews/pv-0123456789abcdef", nil},
			{"GET", "/v1/vms/" + vmID + "/watch?path=/workspace", nil},
			{"POST", "/v1/vms/" + vmID + "/snapshots", map[string]any{}},
			{"POST", "/v1/vms/" + vmID + "/fork", nil},
			{"POST", "/v1/vms/" + vmID + "/pause", nil},
			{"POST", "/v1/vms/" + vmID + "/resume", nil},
			{"PATCH", "/v1/vms/" + vmID, map[string]any{"ttl_ms": 1000}},
			{"DELETE", "/v1/vms/" + vmID, nil},
		} {
			r := s.do(bob, rq.method, rq.path, rq.body)
			if r.status != http.StatusNotFound || r.errCode(t) != "not_found" || !contains(r.body, `"no such VM"`) {
				t.Errorf("bob %s %s: %d %s", rq.method, rq.path, r.status, r.body)
			}
		}
	}
	var list struct{ VMs []struct{ ID string } }
	s.do(bob, "GET", "/v1/vms", nil).json(t, &list)
	if len(list.VMs) != 0 {
		t.Errorf("bob lists %v", list.VMs)
	}
	s.do(alice, "GET", "/v1/vms", nil).json(t, &list)
	if len(list.VMs) != 1 || list.VMs[0].ID != id {
		t.Errorf("alice lists %v", list.VMs)
	}
	// Alice's file survived bob's attempts.
	if r := s.do(alice, "GET", "/v1/vms/"+id+"/files/workspace/secret", nil); r.status != 200 || string(r.body) != "hi\n" {
		t.Errorf("alice read: %d %q", r.status, r.body)
	}
	// Malformed ids and other replicas' ids.
	for _, bad := range []string{"x", "local-", "local-AAAAAAAAAAAAAAAA", "../local-aaaaaaaaaaaaaaaa", "-aaaaaaaaaaaaaaaa"} {
		if r := s.do(alice, "GET", "/v1/vms/"+bad, nil); r.status != http.StatusNotFound {
			t.Errorf("id %q: %d", bad, r.status)
		}
	}
	if r := s.do(alice, "GET", "/v1/vms/other-aaaaaaaaaaaaaaaa", nil); r.status != http.StatusMisdirectedRequest || r.errCode(t) != "wrong_replica" {
		t.Errorf("other replica: %d %s", r.status, r.body)
	}
	if r := s.do(alice, "DELETE", "/v1/vms/"+id, nil); r.status != http.StatusNoContent {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	if r := s.do(alice, "GET", "/v1/vms/"+id, nil); r.status != http.StatusNotFound {
		t.Errorf("after delete: %d", r.status)
	}
}

func TestExecJSON(t *testing.T) {
	s := newServer(t, api.Config{MaxOutputBytes: 1000})
	id := s.newVM(alice, map[string]any{"env": map[string]string{"GREETING": "hello"}})
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	// Bytes stay bytes: every byte value through stdin and back.
	r, res := s.exec(alice, id, map[string]any{"argv": []string{"cat"}, "stdin": b64(all)})
	if r.status != 200 || res.ExitCode != 0 || res.Outcome != "succeeded" || string(res.Stdout) != string(all) {
		t.Fatalf("cat: %d %+v", r.status, res)
	}
	r, res = s.exec(alice, id, map[string]any{"cmd": `echo "$GREETING $X" >&2; exit 3`, "env": map[string]string{"X": "world"}})
	if r.status != 200 || res.ExitCode != 3 || res.Outcome != "failed" || string(res.Stderr) != "hello world\n" {
		t.Fatalf("failing: %d %+v %s", r.status, res, r.body)
	}
	r, res = s.exec(alice, id, map[string]any{"argv": []string{"sleep", "5"}, "timeout_ms": 200})
	if r.status != 200 || res.ExitCode != 124 || res.Outcome != "timed_out" {
		t.Fatalf("timeout: %d %+v", r.status, res)
	}
	// Output over the server's limit is cut and said to be.
	r, res = s.exec(alice, id, map[string]any{"cmd": "head -c 5000 /dev/zero"})
	if r.status != 200 || !res.Truncated || len(res.Stdout) != 1000 {
		t.Fatalf("truncation: %d truncated=%v len=%d", r.status, res.Truncated, len(res.Stdout))
	}
	for _, bad := range []any{
		map[string]any{},
		map[string]any{"cmd": "true", "argv": []string{"true"}},
		map[string]any{"cmd": "true", "stdin": "%%%"},
		map[string]any{"cmd": "true", "nope": 1},
		map[string]any{"cmd": "true", "timeout_ms": -1},
		[]byte("{"),
		[]byte(`{"cmd":"true"} {}`),
	} {
		if r := s.do(alice, "POST", "/v1/vms/"+id+"/exec", bad); r.status != 400 || r.errCode(t) != "bad_request" {
			t.Errorf("%v: %d %s", bad, r.status, r.body)
		}
	}
	if r := s.do(alice, "POST", "/v1/vms/"+id+"/exec", []byte(`{"cmd":"true"}`), "Content-Type", "text/plain"); r.status != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain body: %d", r.status)
	}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data map[string]any
}

func readSSE(t *testing.T, s *testServer, path string, body any) []sseEvent {
	t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", s.url+path, strings.NewReader(string(data)))
	req.Header.Set("Authorization", "Bearer "+alice)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("SSE: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var evs []sseEvent
	sc := bufio.NewScanner(resp.Body)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Fatalf("event data %q: %v", line, err)
			}
		case line == "":
			evs = append(evs, cur)
			cur = sseEvent{}
		}
	}
	// A stream cut off mid-way (the proxy aborting, a reset) is a failure
	// of its own, whatever events came before it.
	if err := sc.Err(); err != nil {
		t.Fatalf("SSE stream of %s ended with %v after %d events", path, err, len(evs))
	}
	validateSSE(t, req, evs)
	return evs
}

func decodeData(t *testing.T, e sseEvent) string {
	t.Helper()
	var b []byte
	raw, _ := json.Marshal(e.data["data"])
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExecStreamsEvents(t *testing.T) {
	s := newServer(t, api.Config{MaxOutputBytes: 4096})
	id := s.newVM(alice, nil)
	evs := readSSE(t, s, "/v1/vms/"+id+"/exec", map[string]any{"cmd": "echo one; echo two >&2; echo three; exit 2"})
	var out, errOut string
	for i, e := range evs {
		switch e.name {
		case "stdout":
			out += decodeData(t, e)
		case "stderr":
			errOut += decodeData(t, e)
		case "exit":
			if i != len(evs)-1 {
				t.Errorf("exit is not the last event: %v", evs)
			}
			if e.data["exit_code"] != float64(2) || e.data["outcome"] != "failed" {
				t.Errorf("exit event %v", e.data)
			}
		default:
			t.Errorf("unexpected event %v", e)
		}
	}
	if out != "one\nthree\n" || errOut != "two\n" || evs[len(evs)-1].name != "exit" {
		t.Fatalf("stdout %q stderr %q events %v", out, errOut, evs)
	}
	// An endless writer is stopped at the limit with a typed error event.
	evs = readSSE(t, s, "/v1/vms/"+id+"/exec", map[string]any{"cmd": "yes"})
	n, sawErr := 0, false
	for _, e := range evs {
		switch e.name {
		case "stdout":
			n += len(decodeData(t, e))
		case "error":
			sawErr = e.data["code"] == "output_too_large"
		}
	}
	last := evs[len(evs)-1]
	if !sawErr || n != 2*4096 || last.name != "exit" || last.data["truncated"] != true {
		t.Fatalf("endless output: error=%v bytes=%d last=%v", sawErr, n, last)
	}
	// JS execute streams the same way.
	evs = readSSE(t, s, "/v1/vms/"+id+"/js/execute", map[string]any{"code": "console.log('from js')"})
	if len(evs) < 2 || decodeData(t, evs[0]) != "from js\n" || evs[len(evs)-1].data["exit_code"] != float64(0) {
		t.Fatalf("js execute events %v", evs)
	}
}

func TestJSEvaluate(t *testing.T) {
	s := newServer(t, api.Config{})
	id := s.newVM(alice, nil)
	r := s.do(alice, "POST", "/v1/vms/"+id+"/js/evaluate", map[string]any{"code": "({a: 1+1, s: 'é'})"})
	var v struct {
		Value struct {
			A int
			S string
		}
	}
	r.json(t, &v)
	if r.status != 200 || v.Value.A != 2 || v.Value.S != "é" {
		t.Fatalf("evaluate: %d %s", r.status, r.body)
	}
	r = s.do(alice, "POST", "/v1/vms/"+id+"/js/evaluate", map[string]any{"code": "(() => { throw new TypeError('boom') })()"})
	if r.status != http.StatusUnprocessableEntity || r.errCode(t) != "eval_error" || !contains(r.body, "TypeError: boom") {
		t.Fatalf("throw: %d %s", r.status, r.body)
	}
	r = s.do(alice, "POST", "/v1/vms/"+id+"/js/execute", map[string]any{"code": "process.stdout.write('x'); process.exit(4)"})
	var res execResult
	r.json(t, &res)
	if r.status != 200 || res.ExitCode != 4 || string(res.Stdout) != "x" {
		t.Fatalf("execute: %d %s", r.status, r.body)
	}
}

func TestCreateVMValidation(t *testing.T) {
	s := newServer(t, api.Config{})
	for _, c := range []struct {
		body any
		code string
	}{
		{map[string]any{"permissions": map[string]any{"fs": "nope"}}, "bad_permissions"},
		{map[string]any{"permissions": map[string]any{"net": []any{map[string]any{"effect": "allow", "hosts": []string{"*"}}}}}, "bad_permissions"},
		{map[string]any{"permissions": map[string]any{"net": []any{map[string]any{"effect": "allow", "ops": []string{"connect"}, "hosts": []string{"10.0.0.0/8"}}}}}, "bad_permissions"},
		{map[string]any{"limits": map[string]any{"fs_bytes": int64(1) << 40}}, "bad_request"},
		{map[string]any{"limits": map[string]any{"processes": -1}}, "bad_request"},
		{map[string]any{"cwd": "relative"}, "bad_request"},
		{map[string]any{"mounts": []any{map[string]any{"path": "x"}}}, "bad_request"},
		{map[string]any{"mounts": []any{map[string]any{"path": "/data", "host_dir": "/etc"}}}, "bad_request"},
		{map[string]any{"idle_timeout_ms": -5}, "bad_request"},
	} {
		if r := s.do(alice, "POST", "/v1/vms", c.body); r.status != 400 || r.errCode(t) != c.code {
			t.Errorf("%v: %d %s", c.body, r.status, r.body)
		}
	}
	// A policy that denies exec is honoured: the VM cannot run sh.
	id := s.newVM(alice, map[string]any{
		"permissions": map[string]any{"fs": []any{map[string]any{"effect": "allow", "paths": []string{"/**"}}}, "exec": []any{map[string]any{"effect": "allow", "commands": []string{"echo"}}}},
		"mounts":      []any{map[string]any{"path": "/data"}},
	})
	if _, res := s.exec(alice, id, map[string]any{"argv": []string{"echo", "ok"}}); string(res.Stdout) != "ok\n" {
		t.Errorf("allowed echo: %+v", res)
	}
	if _, res := s.exec(alice, id, map[string]any{"argv": []string{"cat", "/etc/passwd"}}); res.ExitCode == 0 {
		t.Errorf("denied cat ran: %+v", res)
	}
	if r := s.do(alice, "PUT", "/v1/vms/"+id+"/files/data/f", []byte("mounted")); r.status != 204 {
		t.Errorf("write to memory mount: %d %s", r.status, r.body)
	}
}

func TestQuotas(t *testing.T) {
	s := newServer(t, api.Config{MaxVMs: 1, MaxConcurrent: 1, MaxBodyBytes: 512})
	id := s.newVM(alice, nil)
	r := s.do(alice, "POST", "/v1/vms", map[string]any{})
	if r.status != http.StatusTooManyRequests || r.errCode(t) != "quota_exceeded" || r.header.Get("Retry-After") == "" {
		t.Fatalf("second VM: %d %s", r.status, r.body)
	}
	// Another tenant's quota is its own.
	bobVM := s.newVM(bob, nil)
	// One exec at a time per tenant: the second is refused while the
	// first runs, and bob is unaffected.
	var wg sync.WaitGroup
	wg.Add(1)
	started := make(chan struct{})
	go func() {
		defer wg.Done()
		data, _ := json.Marshal(map[string]any{"argv": []string{"sleep", "2"}})
		req, _ := http.NewRequest("POST", s.url+"/v1/vms/"+id+"/exec", strings.NewReader(string(data)))
		req.Header.Set("Authorization", "Bearer "+alice)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		close(started) // headers arrive once the exec holds its slot
		_, _ = bufio.NewReader(resp.Body).ReadString(0)
		resp.Body.Close()
	}()
	<-started
	r = s.do(alice, "POST", "/v1/vms/"+id+"/exec", map[string]any{"argv": []string{"true"}})
	if r.status != http.StatusTooManyRequests || r.errCode(t) != "quota_exceeded" || r.header.Get("Retry-After") != "1" {
		t.Errorf("concurrent exec: %d %s", r.status, r.body)
	}
	if r, res := s.exec(bob, bobVM, map[string]any{"argv": []string{"true"}}); r.status != 200 || res.ExitCode != 0 {
		t.Errorf("bob's exec: %d %s", r.status, r.body)
	}
	wg.Wait()
	if r, _ := s.exec(alice, id, map[string]any{"argv": []string{"true"}}); r.status != 200 {
		t.Errorf("exec after the first ended: %d %s", r.status, r.body)
	}
	// Bodies over the limit are refused.
	r = s.do(alice, "POST", "/v1/vms/"+id+"/exec", map[string]any{"cmd": "echo " + strings.Repeat("x", 1000)})
	if r.status != http.StatusRequestEntityTooLarge || r.errCode(t) != "too_large" {
		t.Errorf("big body: %d %s", r.status, r.body)
	}
	// Deleting frees the VM quota.
	s.do(alice, "DELETE", "/v1/vms/"+id, nil)
	s.newVM(alice, nil)
}

func TestIdleVMsAreClosed(t *testing.T) {
	s := newServer(t, api.Config{IdleTimeout: time.Minute})
	idle := s.newVM(alice, map[string]any{"idle_timeout_ms": 300})
	kept := s.newVM(alice, nil)
	// Listing does not count as using a VM; a request on it would.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var list struct{ VMs []struct{ ID string } }
		s.do(alice, "GET", "/v1/vms", nil).json(t, &list)
		if len(list.VMs) == 1 && list.VMs[0].ID == kept {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the idle VM was not closed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r := s.do(alice, "GET", "/v1/vms/"+idle, nil); r.status != http.StatusNotFound {
		t.Errorf("the idle VM: %d", r.status)
	}
	if r := s.do(alice, "GET", "/v1/vms/"+kept, nil); r.status != 200 {
		t.Errorf("the other VM: %d", r.status)
	}
	// Its quota slot is free again.
	var list struct{ VMs []any }
	s.do(alice, "GET", "/v1/vms", nil).json(t, &list)
	if len(list.VMs) != 1 {
		t.Errorf("%d VMs listed", len(list.VMs))
	}
}

// TestGracefulShutdown: a running exec finishes and is answered while
// the server drains; new work is refused; the VMs are closed.
func TestGracefulShutdown(t *testing.T) {
	ts, cancel, done := serveAsync(t, api.ServeOptions{DrainTimeout: 20 * time.Second})
	id := ts.newVM(alice, nil)
	got := make(chan execResult, 1)
	go func() {
		_, res := ts.exec(alice, id, map[string]any{"cmd": "sleep 1; echo done"})
		got <- res
	}()
	time.Sleep(300 * time.Millisecond) // let the exec start
	cancel()
	res := <-got
	if string(res.Stdout) != "done\n" || res.ExitCode != 0 {
		t.Fatalf("the in-flight exec: %+v", res)
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if rq, err := http.Get(ts.url + "/healthz"); err == nil {
		rq.Body.Close()
		t.Fatal("the server still accepts connections")
	}
}

// TestShutdownCutsSessionsAtTheDeadline: a WebSocket session that
// outlives the drain timeout is cut, its process killed, and Serve
// returns.
func TestShutdownCutsSessionsAtTheDeadline(t *testing.T) {
	ts, cancel, done := serveAsync(t, api.ServeOptions{DrainTimeout: 500 * time.Millisecond})
	id := ts.newVM(alice, nil)
	pid := spawn(t, ts, id, map[string]any{"argv": []string{"sleep", "60"}})
	c, _, err := dialProcess(t, ts, alice, id, pid)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after the drain timeout")
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rcancel()
	for {
		if _, _, err := c.Read(rctx); err != nil {
			if rctx.Err() != nil {
				t.Fatal("the session was not cut")
			}
			return
		}
	}
}
