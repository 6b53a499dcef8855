package api_test

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/api"
)

// expressApp is an express server the test runs in the VM, with a
// WebSocket echo server (the ws package) on the same port.
const expressApp = `
const express = require('express');
const { WebSocketServer } = require('ws');
const app = express();
app.use(express.json());
app.get('/', (req, res) => res.send('ok from express'));
app.get('/users/:id', (req, res) => res.json({ id: req.params.id, q: req.query.q, auth: req.get('authorization') || null }));
app.post('/echo', (req, res) => res.status(201).json(req.body));
const server = app.listen(3000);
new WebSocketServer({ server }).on('connection', (ws) => {
  ws.on('message', (m) => ws.send('echo:' + m));
});
`

// installExpress installs the locked express project of testdata/npm,
// and the ws package pinned, with the host's npm (the registry client,
// as .ci/run sets it up) and returns it as a tar archive.
func installExpress(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "npm", "express", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "server.js"), []byte(expressApp), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"ci", "--ignore-scripts", "--no-audit", "--no-fund"},
		{"install", "--no-save", "--ignore-scripts", "--no-audit", "--no-fund", "ws@8.18.0"},
	} {
		cmd := exec.Command("npm", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm %v: %v\n%s", args, err, out)
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			_, err = tw.Write(data)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// An express app (the real package, ~70 modules) and a ws WebSocket
// server in the VM, reached through /ports with the tenant's token and
// through a preview with none.
func TestPortsExpress(t *testing.T) {
	archive := installExpress(t)
	s := newServer(t, api.Config{})
	id := s.newVM(alice, nil)
	if r := s.do(alice, "PUT", "/v1/vms/"+id+"/archive?path=/workspace/app", archive, "Content-Type", "application/x-tar"); r.status >= 300 {
		t.Fatalf("archive: %d %s", r.status, r.body)
	}
	spawn(t, s, id, map[string]any{"cmd": "cd /workspace/app && node server.js"})
	base := "/v1/vms/" + id + "/ports/3000"
	for i := 0; ; i++ { // until express listens
		r := s.do(alice, "GET", base+"/", nil)
		if r.status == http.StatusOK {
			if string(r.body) != "ok from express" {
				t.Fatalf("GET /: %q", r.body)
			}
			break
		}
		if r.status != http.StatusBadGateway || i == 1200 {
			t.Fatalf("waiting for express: %d %s", r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	r := s.do(alice, "GET", base+"/users/42?q=x", nil)
	if r.status != 200 || string(r.body) != `{"id":"42","q":"x","auth":null}` {
		t.Fatalf("route params through /ports: %d %s", r.status, r.body)
	}
	r = s.do(alice, "POST", base+"/echo", []byte(`{"a":[1,2]}`), "Content-Type", "application/json")
	if r.status != http.StatusCreated || string(r.body) != `{"a":[1,2]}` {
		t.Fatalf("POST JSON: %d %s", r.status, r.body)
	}
	r = s.do(alice, "POST", "/v1/vms/"+id+"/previews", map[string]any{"port": 3000})
	var pv struct{ URL string }
	r.json(t, &pv)
	if code, body := get(t, "GET", pv.URL+"users/7", nil); code != 200 || body != `{"id":"7","auth":null}` {
		t.Fatalf("through the preview: %d %s", code, body)
	}
	if got := echoWS(t, s.url+base+"/", alice, "to ws"); got != "echo:to ws" {
		t.Fatalf("ws through /ports: %q", got)
	}
	if got := echoWS(t, pv.URL, "", "to ws via a preview"); got != "echo:to ws via a preview" {
		t.Fatalf("ws through the preview: %q", got)
	}
	if code, body := get(t, "GET", pv.URL+"no-such-page", nil); code != http.StatusNotFound || !strings.Contains(body, "Cannot GET /no-such-page") {
		t.Fatalf("express's own 404 through the preview: %d %s", code, body)
	}
}
