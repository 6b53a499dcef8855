package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/api"
)

// watchEvent is a change event of GET /watch.
type watchEvent struct {
	Op    string `json:"op"`
	Name  string `json:"name"`
	IsDir bool   `json:"is_dir"`
}

// openWatch opens GET /watch on s for alice and returns its events as
// they come; the stream closes with the test.
func openWatch(t *testing.T, s *testServer, id, query string) <-chan watchEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/vms/"+id+"/watch?"+query, nil)
	req.Header.Set("Authorization", "Bearer "+alice)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("watch: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ch := make(chan watchEvent, 64)
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		name := ""
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok && name == "change" {
				var ev watchEvent
				if json.Unmarshal([]byte(v), &ev) == nil {
					ch <- ev
				}
			}
		}
	}()
	return ch
}

// expectEvents reads ch until want was seen in order (other events, such
// as attribute changes, between them).
func expectEvents(t *testing.T, ch <-chan watchEvent, want ...watchEvent) {
	t.Helper()
	timeout := time.After(60 * time.Second) // a hang guard, not a measurement
	var seen []watchEvent
	for len(want) > 0 {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended after %+v, waiting for %+v", seen, want)
			}
			seen = append(seen, ev)
			if ev == want[0] {
				want = want[1:]
			}
		case <-timeout:
			t.Fatalf("after %+v, still waiting for %+v", seen, want)
		}
	}
}

// GET /watch streams the changes guests and the API make, as
// server-sent events, and ends when the watched path goes.
func TestWatchFiles(t *testing.T) {
	s := newServer(t, api.Config{MaxWatches: 2})
	id := s.newVM(alice, nil)
	if r, _ := s.exec(alice, id, map[string]any{"cmd": "mkdir -p /workspace/w"}); r.status != 200 {
		t.Fatalf("mkdir: %d %s", r.status, r.body)
	}
	for q, want := range map[string]int{"": http.StatusBadRequest, "path=/nowhere": http.StatusNotFound,
		"path=/workspace/w&recursive=maybe": http.StatusBadRequest} {
		if r := s.do(alice, "GET", "/v1/vms/"+id+"/watch?"+q, nil); r.status != want {
			t.Errorf("watch?%s: %d %s, want %d", q, r.status, r.body, want)
		}
	}
	ch := openWatch(t, s, id, "path=/workspace/w&recursive=true")
	if r := s.do(alice, "PUT", "/v1/vms/"+id+"/files/workspace/w/a.txt", []byte("one")); r.status >= 300 {
		t.Fatalf("put: %d %s", r.status, r.body)
	}
	// Uploads are written aside and renamed into place.
	expectEvents(t, ch, watchEvent{Op: "rename_to", Name: "a.txt"})
	if r, res := s.exec(alice, id, map[string]any{"cmd": "cd /workspace/w && mkdir d && echo x >> d/b && mv a.txt c.txt && rm c.txt"}); r.status != 200 || res.ExitCode != 0 {
		t.Fatalf("exec: %d %s", r.status, r.body)
	}
	expectEvents(t, ch,
		watchEvent{Op: "create", Name: "d", IsDir: true},
		watchEvent{Op: "create", Name: "d/b"},
		watchEvent{Op: "write", Name: "d/b"},
		watchEvent{Op: "rename_from", Name: "a.txt"},
		watchEvent{Op: "rename_to", Name: "c.txt"},
		watchEvent{Op: "remove", Name: "c.txt"})
	// The watch count per VM is bounded.
	openWatch(t, s, id, "path=/workspace")
	if r := s.do(alice, "GET", "/v1/vms/"+id+"/watch?path=/workspace", nil); r.status != http.StatusTooManyRequests {
		t.Fatalf("a third watch: %d %s", r.status, r.body)
	}
	// Removing the watched directory ends the stream.
	if r, _ := s.exec(alice, id, map[string]any{"cmd": "rm -r /workspace/w"}); r.status != 200 {
		t.Fatalf("rm: %d %s", r.status, r.body)
	}
	expectEvents(t, ch, watchEvent{Op: "ended"})
	for range ch {
	}
}
