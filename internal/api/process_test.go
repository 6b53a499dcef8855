package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/secexec/secexec/internal/api"
)

func dialProcess(t *testing.T, s *testServer, token, id string, pid int) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	u := "ws" + strings.TrimPrefix(s.url, "http") + "/v1/vms/" + id + "/processes/" + itoa(pid) + "/ws"
	return websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func spawn(t testing.TB, s *testServer, id string, body any) int {
	t.Helper()
	return spawnAs(t, s, alice, id, body)
}

func spawnAs(t testing.TB, s *testServer, token, id string, body any) int {
	t.Helper()
	r := s.do(token, "POST", "/v1/vms/"+id+"/processes", body)
	if r.status != http.StatusCreated {
		t.Fatalf("spawn: %d %s", r.status, r.body)
	}
	var p struct{ Pid int }
	r.json(t, &p)
	return p.Pid
}

// session reads a process session to its end: stdout, stderr and the
// exit frame, which must come last.
func session(t *testing.T, c *websocket.Conn) (stdout, stderr string, exit map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			if exit == nil {
				t.Fatalf("session ended without an exit frame: %v", err)
			}
			return
		}
		if exit != nil {
			t.Fatalf("a frame after the exit frame: %q", msg)
		}
		if typ != websocket.MessageBinary || len(msg) == 0 {
			t.Fatalf("frame %v %q", typ, msg)
		}
		switch msg[0] {
		case api.TagStdout:
			stdout += string(msg[1:])
		case api.TagStderr:
			stderr += string(msg[1:])
		case api.TagExit:
			if err := json.Unmarshal(msg[1:], &exit); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("tag %d", msg[0])
		}
	}
}

func TestProcessWebSocket(t *testing.T) {
	s := newServer(t, api.Config{})
	id := s.newVM(alice, nil)
	pid := spawn(t, s, id, map[string]any{"cmd": "cat; echo bye >&2; exit 5"})
	var list struct{ Processes []struct{ Pid int } }
	s.do(alice, "GET", "/v1/vms/"+id+"/processes", nil).json(t, &list)
	if len(list.Processes) != 1 || list.Processes[0].Pid != pid {
		t.Fatalf("processes: %+v", list)
	}
	// Another tenant cannot attach; nor can a second session.
	if _, resp, err := dialProcess(t, s, bob, id, pid); err == nil || resp == nil || resp.StatusCode != 404 {
		t.Fatalf("bob attached: %v", err)
	}
	c, _, err := dialProcess(t, s, alice, id, pid)
	if err != nil {
		t.Fatal(err)
	}
	if _, resp, err := dialProcess(t, s, alice, id, pid); err == nil || resp.StatusCode != http.StatusConflict {
		t.Fatalf("second session: %v", err)
	}
	ctx := context.Background()
	in := []byte{api.TagStdin, 'h', 'i', 0, 0xff, '\n'}
	if err := c.Write(ctx, websocket.MessageBinary, in); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, websocket.MessageBinary, []byte{api.TagStdinEOF}); err != nil {
		t.Fatal(err)
	}
	out, errOut, exit := session(t, c)
	if out != "hi\x00\xff\n" || errOut != "bye\n" || exit["exit_code"] != float64(5) {
		t.Fatalf("stdout %q stderr %q exit %v", out, errOut, exit)
	}
	c.Close(websocket.StatusNormalClosure, "")
	// The ended process is forgotten.
	s.do(alice, "GET", "/v1/vms/"+id+"/processes", nil).json(t, &list)
	if len(list.Processes) != 0 {
		t.Errorf("processes after the session: %+v", list)
	}

	// Signals: SIGTERM ends a sleeper with 128+15.
	pid = spawn(t, s, id, map[string]any{"argv": []string{"sleep", "30"}})
	c, _, err = dialProcess(t, s, alice, id, pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, websocket.MessageBinary, []byte{api.TagSignal, 15}); err != nil {
		t.Fatal(err)
	}
	if _, _, exit := session(t, c); exit["exit_code"] != float64(143) {
		t.Fatalf("after SIGTERM: %v", exit)
	}

	// A bad frame ends the session and the process.
	pid = spawn(t, s, id, map[string]any{"argv": []string{"sleep", "30"}})
	c, _, err = dialProcess(t, s, alice, id, pid)
	if err != nil {
		t.Fatal(err)
	}
	c.Write(ctx, websocket.MessageBinary, []byte{99})
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		if _, _, err := c.Read(rctx); err != nil {
			if rctx.Err() != nil {
				t.Fatal("the session did not end")
			}
			break
		}
	}

	// DELETE kills a process nobody attached to.
	pid = spawn(t, s, id, map[string]any{"argv": []string{"sleep", "30"}})
	if r := s.do(alice, "DELETE", "/v1/vms/"+id+"/processes/"+itoa(pid), nil); r.status != 204 {
		t.Fatalf("kill: %d %s", r.status, r.body)
	}
	if r := s.do(alice, "DELETE", "/v1/vms/"+id+"/processes/"+itoa(pid), nil); r.status != 404 {
		t.Fatalf("kill twice: %d", r.status)
	}
}

// A process on a terminal: the session's stdout frames are the screen,
// and a resize frame reaches the program as SIGWINCH and a new size.
func TestProcessTerminal(t *testing.T) {
	s := newServer(t, api.Config{})
	id := s.newVM(alice, nil)
	for _, bad := range []map[string]any{{"rows": 0, "cols": 80}, {"rows": 24, "cols": 5000}, {"rows": 24}} {
		if r := s.do(alice, "POST", "/v1/vms/"+id+"/processes", map[string]any{"argv": []string{"true"}, "pty": bad}); r.status != http.StatusBadRequest {
			t.Errorf("pty %v: %d %s", bad, r.status, r.body)
		}
	}
	script := `console.log('tty', process.stdin.isTTY, process.stdout.isTTY, process.stdout.columns + 'x' + process.stdout.rows);` +
		`process.stdout.on('resize', () => { console.log('resized', process.stdout.columns + 'x' + process.stdout.rows); process.exit(3); });` +
		`console.log('ready'); setTimeout(() => {}, 30000);`
	r := s.do(alice, "POST", "/v1/vms/"+id+"/processes", map[string]any{"argv": []string{"node", "-e", script}, "pty": map[string]any{"rows": 30, "cols": 100}})
	if r.status != http.StatusCreated {
		t.Fatalf("spawn: %d %s", r.status, r.body)
	}
	var p struct {
		Pid int
		TTY bool
	}
	r.json(t, &p)
	if !p.TTY {
		t.Errorf("the process does not say it has a terminal: %s", r.body)
	}
	c, _, err := dialProcess(t, s, alice, id, p.Pid)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var screen string
	for !strings.Contains(screen, "ready") {
		_, msg, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("before ready: %v (screen %q)", err, screen)
		}
		if msg[0] != api.TagStdout {
			t.Fatalf("frame %d %q before ready", msg[0], msg[1:])
		}
		screen += string(msg[1:])
	}
	if want := "tty true true 100x30\r\n"; !strings.Contains(screen, want) {
		t.Errorf("screen %q lacks %q", screen, want)
	}
	if err := c.Write(ctx, websocket.MessageBinary, []byte{api.TagResize, 0, 40, 0, 120}); err != nil {
		t.Fatal(err)
	}
	out, errOut, exit := session(t, c)
	if !strings.Contains(out, "resized 120x40\r\n") || errOut != "" || exit["exit_code"] != float64(3) {
		t.Fatalf("after resize: screen %q, stderr %q, exit %v", out, errOut, exit)
	}
}

// A client that closes its session in good order while the process is
// silent ends the process too: the session is over whoever ends it, and
// the process must not keep the tenant's slot (nor run on unseen).
func TestProcessSessionClosedByClient(t *testing.T) {
	s := newServer(t, api.Config{MaxConcurrent: 1})
	id := s.newVM(alice, nil)
	pid := spawn(t, s, id, map[string]any{"argv": []string{"sleep", "600"}})
	c, _, err := dialProcess(t, s, alice, id, pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
	// The process is forgotten and the one slot free again: an exec
	// runs (polled: the session's end reaches the server a moment later).
	deadline := time.Now().Add(30 * time.Second)
	for {
		var list struct{ Processes []struct{ Pid int } }
		s.do(alice, "GET", "/v1/vms/"+id+"/processes", nil).json(t, &list)
		r, res := s.exec(alice, id, map[string]any{"cmd": "echo free"})
		if len(list.Processes) == 0 && r.status == http.StatusOK && string(res.Stdout) == "free\n" {
			return
		}
		if time.Now().After(deadline) {
			s.do(alice, "DELETE", "/v1/vms/"+id+"/processes/"+itoa(pid), nil) // else the cleanup's drain waits on it
			t.Fatalf("after the client closed the session: processes %+v, exec %d %s", list.Processes, r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
