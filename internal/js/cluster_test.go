package js

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
	"github.com/secexec/secexec/kernel"
	"github.com/secexec/secexec/kernel/policy"
	"github.com/secexec/secexec/kernel/vfs"
)

// TestClusterHTTPFromHost: a primary forks two workers that each listen
// on port 3000 through it; the embedder reaches the port over the VM's
// port mapping (DialGuest) and both workers answer; on /bye the primary
// disconnects its workers and everything exits 0.
func TestClusterHTTPFromHost(t *testing.T) {
	v := newVM(t, nil)
	v.writeFile("/workspace/server.js", `
const cluster = require('node:cluster');
const http = require('node:http');
if (cluster.isPrimary) {
  let listening = 0;
  cluster.on('listening', (w, a) => { if (++listening === 2) console.log('ready', a.port); });
  cluster.on('message', (w, m) => { if (m === 'bye') cluster.disconnect(() => console.log('disconnected')); });
  cluster.on('exit', (w, code, sig) => console.log('exit', w.id, code, sig, w.exitedAfterDisconnect));
  cluster.fork();
  cluster.fork();
} else {
  http.createServer((req, res) => {
    if (req.url === '/bye') process.send('bye');
    res.end('worker ' + cluster.worker.id);
  }).listen(3000);
}
`)
	k := v.vm.Kernel
	outR, outW, err := k.NewPipe()
	if err != nil {
		t.Fatal(err)
	}
	errW, errOut := collect(k, t)
	p, err := k.SpawnHost(context.Background(), kernel.SpawnOptions{Argv: []string{"node", "server.js"},
		Env: []string{"PATH=/usr/bin:/bin"}, Cwd: "/workspace", Files: []vfs.File{nil, outW, errW}})
	outW.DecRef()
	errW.DecRef()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Signal(kernel.SIGKILL) }()
	// stdout line by line: the first says both workers listen.
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		defer outR.DecRef()
		sc := bufio.NewScanner(fileReader{outR})
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	if l := <-lines; l != "ready 3000" {
		t.Fatalf("first line %q\nstderr: %s", l, trunc(errOut()))
	}
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true, // a connection per request, so each is dealt anew
		DialContext:       func(ctx context.Context, _, _ string) (net.Conn, error) { return k.DialGuest(ctx, 3000) },
	}}
	get := func(path string) string {
		t.Helper()
		resp, err := client.Get("http://app" + path)
		if err != nil {
			t.Fatalf("GET %s: %v\nstderr: %s", path, err, trunc(errOut()))
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	seen := map[string]int{}
	for range 8 {
		seen[get("/")]++
	}
	if seen["worker 1"] == 0 || seen["worker 2"] == 0 || len(seen) != 2 {
		t.Errorf("answers %v, want both workers", seen)
	}
	get("/bye")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if st, err := p.HostWait(ctx); err != nil || st.ShellCode() != 0 {
		t.Errorf("the primary ended with %v, %v\nstderr: %s", st, err, trunc(errOut()))
	}
	// The exits' order is the workers' race; the lines are not.
	var rest []string
	for l := range lines {
		rest = append(rest, l)
	}
	sort.Strings(rest)
	if got, want := strings.Join(rest, "\n"), "disconnected\nexit 1 0 null true\nexit 2 0 null true"; got != want {
		t.Errorf("stdout after ready:\n%s\nwant:\n%s", got, want)
	}
}

// TestClusterForkBombEndsAtLimit: workers are processes of the VM, so a
// primary forking without end gets 'error' events (EAGAIN) once the VM's
// process limit is reached; the workers that started are unaffected and
// the host is never at risk.
func TestClusterForkBombEndsAtLimit(t *testing.T) {
	v := newConfiguredVM(t, engine(t), vm.Config{Policy: policy.AllowAll(), Limits: kernel.Limits{Processes: 6}})
	v.writeFile("/workspace/bomb.js", `
const cluster = require('cluster');
if (cluster.isWorker) { process.send('up'); return; }
let up = 0, errors = 0;
const codes = new Set();
const tries = 40;
const settle = () => {
  if (up + errors < tries) return;
  console.log('up', up, 'errors', errors, [...codes].join());
  cluster.disconnect();
};
for (let i = 0; i < tries; i++) {
  const w = cluster.fork();
  w.on('message', () => { up++; settle(); });
  w.on('error', (e) => { errors++; codes.add(e.code); settle(); });
}
`)
	r := v.run("", "node", "bomb.js")
	// Six processes: the primary and five workers.
	expectRun(t, r, "up 5 errors 35 EAGAIN\n")
}

// fileReader reads a kernel file as an io.Reader (end of file: a read of
// nothing).
type fileReader struct{ f vfs.File }

func (r fileReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(context.Background(), p)
	if n == 0 && err == nil {
		return 0, io.EOF
	}
	return n, err
}
