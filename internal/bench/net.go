package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/secexec/secexec"
)

// fetchRow is the fetch row's set-up: a host HTTP server on loopback and
// a VM whose policy allows exactly it.
type fetchRow struct {
	srv *http.Server
	vm  *secexec.VM
	op  func() error
}

func (f *fetchRow) close() {
	_ = f.vm.Close()
	_ = f.srv.Close()
}

// fetchOp measures a node process that fetches a URL on the host's
// loopback and reads the body: node's start, undici's first use and one
// HTTP exchange through the kernel's socket layer and policy.
func (r *runner) fetchOp(ctx context.Context) (*fetchRow, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})}
	go func() { _ = srv.Serve(ln) }()
	opts := r.options(r.cfg.Engine)
	opts.Permissions = secexec.AllowAll().AllowNet(ln.Addr().String())
	vm, err := secexec.NewVM(ctx, opts)
	if err != nil {
		_ = srv.Close()
		return nil, err
	}
	cmd := fmt.Sprintf(`node -e "fetch('http://%s/').then((r) => r.text()).then((t) => { if (t !== 'ok') process.exit(1) })"`, ln.Addr())
	return &fetchRow{srv: srv, vm: vm, op: func() error { return execOK(ctx, vm, cmd) }}, nil
}

// guestHTTPClients is how many host clients load the guest server at once.
const guestHTTPClients = 4

// guestHTTP measures a node HTTP server in a VM answering the host: four
// keep-alive clients send GET requests back to back through vm.Net() for
// the sustain duration.
func (r *runner) guestHTTP(ctx context.Context, d rowDef) (Row, error) {
	row := Row{ID: d.id, Label: d.label, Unit: UnitPerSec}
	vm, err := secexec.NewVM(ctx, r.options(r.cfg.Engine))
	if err != nil {
		return row, err
	}
	defer vm.Close()
	p, err := vm.Spawn(ctx, []string{"node", "-e",
		`require('http').createServer((q, s) => s.end('ok')).listen(8080, () => console.log('ready'))`}, nil)
	if err != nil {
		return row, err
	}
	defer func() { _ = p.Signal(secexec.SIGKILL) }()
	if line, err := bufio.NewReader(p.Stdout).ReadString('\n'); err != nil || line != "ready\n" {
		return row, fmt.Errorf("guest server: %q, %v", line, err)
	}
	tr := vm.Net().Transport()
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	get := func() error {
		resp, err := client.Get("http://guest:8080/")
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	for range warmups * guestHTTPClients {
		if err := get(); err != nil {
			return row, err
		}
	}
	var n atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range guestHTTPClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < r.cfg.Sustain {
				if err := get(); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return row, firstErr
	}
	row.N = int(n.Load())
	row.Value = float64(row.N) / time.Since(start).Seconds()
	return row, nil
}
