package security_test

// Attacks by a hostile tenant on the HTTP API of `secexec serve` (issue
// 19, findings 1, 4, 7 and 8): the server runs in this test process, so
// its heap can be measured, and its VMs in engine processes as in
// production.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/api"
)

const apiToken = "hostile-tenant-token"

// apiServer is an API server on a loopback port with two tenants, "evil"
// (apiToken) and "other" (apiToken+"-other").
type apiServer struct {
	t   *testing.T
	url string
}

func newAPIServer(t *testing.T, cfg api.Config) *apiServer {
	t.Helper()
	cfg.Tokens = []api.Token{{Tenant: "evil", Hash: api.HashToken(apiToken)}, {Tenant: "other", Hash: api.HashToken(apiToken + "-other")}}
	s, err := api.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.Close()
		_ = s.Shutdown(context.Background())
	})
	return &apiServer{t: t, url: hs.URL}
}

// apiAnswer is a response read whole.
type apiAnswer struct {
	status int
	body   []byte
}

func (a *apiAnswer) code() string {
	var e struct{ Error struct{ Code string } }
	_ = json.Unmarshal(a.body, &e)
	return e.Error.Code
}

func (s *apiServer) req(token, method, path string, body any) *apiAnswer {
	s.t.Helper()
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, _ := json.Marshal(b)
		rd, ct = bytes.NewReader(data), "application/json"
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return &apiAnswer{resp.StatusCode, data}
}

func (s *apiServer) vm(token string, body any) string {
	s.t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	r := s.req(token, "POST", "/v1/vms", body)
	if r.status != http.StatusCreated {
		s.t.Fatalf("create VM: %d %s", r.status, r.body)
	}
	var v struct{ ID string }
	_ = json.Unmarshal(r.body, &v)
	return s.url + "/v1/vms/" + v.ID
}

// heapPeak samples the heap while f runs and returns the largest growth
// over the heap before it, with the collector kept tight so that garbage
// does not pass for held memory.
func heapPeak(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > peak.Load() {
				peak.Store(ms.HeapAlloc - base)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	return peak.Load()
}

// sparseTar is a tar of one sparse file "big" of realSize bytes holding
// one data byte at its end, in the PAX format major (0: the 0.1 map
// record, 1: the 1.0 map in the data), as GNU tar writes them.
func sparseTar(realSize int64, major int) []byte {
	var b bytes.Buffer
	rec := func(k, v string) string {
		n := len(k) + len(v) + 3
		for {
			s := fmt.Sprintf("%d %s=%s\n", n, k, v)
			if len(s) == n {
				return s
			}
			n = len(s)
		}
	}
	var pax string
	var data []byte
	if major == 1 {
		pax = rec("GNU.sparse.major", "1") + rec("GNU.sparse.minor", "0") + rec("GNU.sparse.name", "big") +
			rec("GNU.sparse.realsize", fmt.Sprint(realSize))
		data = append(padBlock([]byte(fmt.Sprintf("1\n%d\n1\n", realSize-1))), 'x')
	} else {
		pax = rec("GNU.sparse.numblocks", "1") + rec("GNU.sparse.map", fmt.Sprintf("%d,1", realSize-1)) +
			rec("GNU.sparse.name", "big") + rec("GNU.sparse.size", fmt.Sprint(realSize))
		data = []byte{'x'}
	}
	b.Write(tarHeader("PaxHeaders/big", 'x', int64(len(pax)), false))
	b.Write(padBlock([]byte(pax)))
	b.Write(tarHeader("GNUSparseFile.0/big", '0', int64(len(data)), false))
	b.Write(padBlock(data))
	b.Write(make([]byte, 1024))
	return b.Bytes()
}

// gnuSparseTar is a tar of one old-GNU sparse entry (type 'S').
func gnuSparseTar(realSize int64) []byte {
	h := tarHeader("big", 'S', 1, true)
	copy(h[386:], fmt.Sprintf("%011o\x00%011o\x00", realSize-1, 1))
	copy(h[483:], fmt.Sprintf("%011o\x00", realSize))
	checksum(h)
	return append(append(h, padBlock([]byte{'x'})...), make([]byte, 1024)...)
}

func padBlock(p []byte) []byte { return append(p, make([]byte, (512-len(p)%512)%512)...) }

func tarHeader(name string, typ byte, size int64, gnu bool) []byte {
	h := make([]byte, 512)
	copy(h, name)
	copy(h[100:], "0000644\x00")
	copy(h[108:], "0000000\x00")
	copy(h[116:], "0000000\x00")
	copy(h[124:], fmt.Sprintf("%011o\x00", size))
	copy(h[136:], "00000000000\x00")
	h[156] = typ
	if gnu {
		copy(h[257:], "ustar  \x00")
	} else {
		copy(h[257:], "ustar\x0000")
	}
	checksum(h)
	return h
}

func checksum(h []byte) {
	copy(h[148:], "        ")
	sum := 0
	for _, c := range h {
		sum += int(c)
	}
	copy(h[148:], fmt.Sprintf("%06o\x00 ", sum))
}

// regTar is a tar of regular files in order; a file with size < 0 has
// its header claim -size bytes but carries none (a cut archive).
func regTar(files ...struct {
	name string
	body []byte
	size int64
}) []byte {
	var b bytes.Buffer
	for _, f := range files {
		size := int64(len(f.body))
		if f.size != 0 {
			size = f.size
		}
		b.Write(tarHeader(f.name, '0', size, false))
		b.Write(padBlock(f.body))
	}
	b.Write(make([]byte, 1024))
	return b.Bytes()
}

type tarFile = struct {
	name string
	body []byte
	size int64
}

// TestAPISparseTarUpload (issue 19, finding 1): a few KiB of tar holding
// a sparse entry archive/tar would expand to hundreds of MiB is refused
// as bad_archive before any of it is expanded, in each sparse encoding;
// an entry declaring more bytes than the upload may carry is refused
// before it is read; an archive refused part-way leaves the entries
// before the bad one whole and nothing of the bad one.
func TestAPISparseTarUpload(t *testing.T) {
	s := newAPIServer(t, api.Config{})
	vm := s.vm(apiToken, nil)
	const realSize = 384 << 20
	for name, body := range map[string][]byte{
		"PAX 1.0": sparseTar(realSize, 1), "PAX 0.1": sparseTar(realSize, 0), "old GNU": gnuSparseTar(realSize),
	} {
		var r *apiAnswer
		grew := heapPeak(func() { r = s.req(apiToken, "PUT", strings.TrimPrefix(vm, s.url)+"/archive?path=/workspace/up", body) })
		if r.status != http.StatusBadRequest || r.code() != "bad_archive" {
			t.Errorf("%s sparse entry (%d bytes on the wire): %d %s", name, len(body), r.status, r.body)
		}
		if grew > 64<<20 {
			t.Errorf("%s sparse entry grew the server's heap by %d MiB", name, grew>>20)
		}
	}
	path := strings.TrimPrefix(vm, s.url)
	if r := s.req(apiToken, "GET", path+"/files/workspace/up/big?stat", nil); r.status != http.StatusNotFound {
		t.Errorf("sparse entry left a file: %d %s", r.status, r.body)
	}
	// A declared size over what the body may still carry: refused
	// before reading (413), not after reading to the end (400).
	if r := s.req(apiToken, "PUT", path+"/archive?path=/workspace/up", regTar(tarFile{"huge", []byte("x"), 1 << 32})); r.status != http.StatusRequestEntityTooLarge || r.code() != "too_large" {
		t.Errorf("declared 4 GiB entry: %d %s", r.status, r.body)
	}
	// A good entry, then one cut short: the first stays whole, the
	// second leaves nothing (no partial file, no temporary).
	r := s.req(apiToken, "PUT", path+"/archive?path=/workspace/part", regTar(tarFile{"a", []byte("whole"), 0}, tarFile{"b", []byte("cut"), 4096}))
	if r.status != http.StatusBadRequest || r.code() != "bad_archive" {
		t.Errorf("cut archive: %d %s", r.status, r.body)
	}
	if r := s.req(apiToken, "GET", path+"/files/workspace/part/a", nil); r.status != 200 || string(r.body) != "whole" {
		t.Errorf("entry before the bad one: %d %q", r.status, r.body)
	}
	var list struct{ Entries []struct{ Name string } }
	_ = json.Unmarshal(s.req(apiToken, "GET", path+"/files/workspace/part?list", nil).body, &list)
	if len(list.Entries) != 1 {
		t.Errorf("after a cut archive the directory holds %+v, want only a", list.Entries)
	}
}

// TestAPIFileRoutesStream (issue 19, finding 7): six parallel reads of
// /dev/zero answer at once with not_regular_file without the server
// reading the device; a 48 MiB file goes up and comes back without the
// server ever holding it; file routes count against --max-concurrent.
func TestAPIFileRoutesStream(t *testing.T) {
	s := newAPIServer(t, api.Config{MaxConcurrent: 8})
	vm := s.vm(apiToken, nil)
	path := strings.TrimPrefix(vm, s.url)
	var wg sync.WaitGroup
	answers := make([]*apiAnswer, 6)
	start := time.Now()
	grew := heapPeak(func() {
		for i := range answers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = s.req(apiToken, "GET", path+"/files/dev/zero", nil)
			}()
		}
		wg.Wait()
	})
	for _, r := range answers {
		if r.status != http.StatusBadRequest || r.code() != "not_regular_file" {
			t.Fatalf("GET /files/dev/zero: %d %.200s", r.status, r.body)
		}
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("six reads of /dev/zero took %v", d)
	}
	if grew > 32<<20 {
		t.Errorf("six reads of /dev/zero grew the server's heap by %d MiB", grew>>20)
	}

	// A procfs file (regular, size 0 by its stat) is still read whole.
	if r := s.req(apiToken, "GET", path+"/files/proc/uptime", nil); r.status != 200 || len(r.body) == 0 {
		t.Errorf("GET /files/proc/uptime: %d %q", r.status, r.body)
	}

	// A big file both ways, streamed: the heap never holds a copy.
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<20) // 48 MiB
	want := sha256.Sum256(big)
	var put *apiAnswer
	grew = heapPeak(func() { put = s.req(apiToken, "PUT", path+"/files/workspace/big.bin", big) })
	if put.status != http.StatusNoContent {
		t.Fatalf("PUT 48 MiB: %d %s", put.status, put.body)
	}
	if grew > 24<<20 {
		t.Errorf("a 48 MiB upload grew the server's heap by %d MiB", grew>>20)
	}
	var got [32]byte
	var n int64
	grew = heapPeak(func() {
		req, _ := http.NewRequest("GET", vm+"/files/workspace/big.bin", nil)
		req.Header.Set("Authorization", "Bearer "+apiToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		h := sha256.New()
		n, _ = io.Copy(h, resp.Body)
		copy(got[:], h.Sum(nil))
	})
	if n != int64(len(big)) || got != want {
		t.Fatalf("GET 48 MiB: %d bytes, digest match %v", n, got == want)
	}
	if grew > 24<<20 {
		t.Errorf("a 48 MiB download grew the server's heap by %d MiB", grew>>20)
	}

	// File routes hold a concurrency slot: with --max-concurrent 1 and an
	// exec running, a file read is refused with 429.
	s1 := newAPIServer(t, api.Config{MaxConcurrent: 1})
	vm1 := strings.TrimPrefix(s1.vm(apiToken, nil), s1.url)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Retried while a probe below holds the one slot.
		for i := 0; i < 100 && s1.req(apiToken, "POST", vm1+"/exec", map[string]any{"argv": []string{"sleep", "3"}}).status == http.StatusTooManyRequests; i++ {
			time.Sleep(10 * time.Millisecond)
		}
	}()
	refused := false
	for deadline := time.Now().Add(6 * time.Second); time.Now().Before(deadline) && !refused; time.Sleep(50 * time.Millisecond) {
		r := s1.req(apiToken, "GET", vm1+"/files/workspace?list", nil)
		refused = r.status == http.StatusTooManyRequests && r.code() == "quota_exceeded"
	}
	<-done
	if !refused {
		t.Error("a file route ran beside an exec under --max-concurrent 1")
	}
	if r := s1.req(apiToken, "GET", vm1+"/files/workspace?list", nil); r.status != 200 {
		t.Errorf("file route after the exec: %d %s", r.status, r.body)
	}
}

// TestAPIToolCallbackSSRF (issue 19, finding 8): a tool URL naming the
// server's loopback (by address in any spelling, or by a name that
// resolves there) or the metadata service is refused unless the operator
// opened the network; the refused callback never reaches the target, and
// every failure — refused address, 401, not JSON, closed port, redirect —
// reaches the guest as the same ERR_TOOL_FAILED text.
func TestAPIToolCallbackSSRF(t *testing.T) {
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte(`{"ok":true}`))
		case "/401":
			http.Error(w, "who are you", http.StatusUnauthorized)
		case "/text":
			_, _ = w.Write([]byte("hello"))
		case "/redirect":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		}
	}))
	defer target.Close()
	port := target.Listener.Addr().(*net.TCPAddr).Port
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedURL := "http://" + closed.Addr().String() + "/"
	closed.Close()
	perms := map[string]any{
		"fs":    []any{map[string]any{"effect": "allow", "paths": []string{"/**"}}},
		"exec":  []any{map[string]any{"effect": "allow", "commands": []string{"*"}}},
		"tools": []any{map[string]any{"effect": "allow", "names": []string{"*"}}},
	}
	call := func(s *apiServer, vm, name string) string {
		t.Helper()
		r := s.req(apiToken, "POST", strings.TrimPrefix(vm, s.url)+"/js/evaluate", map[string]any{
			"code": "require('secexec:tools').call('" + name + "', {}).then(v => JSON.stringify(v), e => e.code + ': ' + e.message)"})
		var v struct{ Value string }
		if r.status != 200 || json.Unmarshal(r.body, &v) != nil {
			t.Fatalf("evaluate: %d %s", r.status, r.body)
		}
		// The message names the tool; the rest must not differ.
		return strings.ReplaceAll(v.Value, "tool "+name+":", "tool T:")
	}

	// Without the operator's allowance: literal special addresses are
	// refused when the VM is made; a name is refused at the call.
	strict := newAPIServer(t, api.Config{})
	for _, u := range []string{target.URL, fmt.Sprintf("http://0x7f.1:%d/", port), fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port),
		"http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/", "http://[::1]/"} {
		r := strict.req(apiToken, "POST", "/v1/vms", map[string]any{"permissions": perms, "tools": []any{map[string]any{"name": "t", "url": u}}})
		if r.status != http.StatusBadRequest {
			t.Errorf("tool URL %s: %d %s", u, r.status, r.body)
		}
	}
	vm := strict.vm(apiToken, map[string]any{"permissions": perms,
		"tools": []any{map[string]any{"name": "byname", "url": fmt.Sprintf("http://localhost:%d/ok", port)}}})
	refusedText := call(strict, vm, "byname")
	if hits.Load() != 0 {
		t.Fatalf("a callback to localhost reached the loopback server (%d hits)", hits.Load())
	}
	if !strings.HasPrefix(refusedText, "ERR_TOOL_FAILED: ") {
		t.Fatalf("refused callback: %q", refusedText)
	}

	// With loopback opened by the operator: the tool works, and every
	// kind of failure reads the same as the refused address did.
	open := newAPIServer(t, api.Config{AllowToolNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	tools := []any{}
	for _, n := range []string{"ok", "401", "text", "redirect"} {
		tools = append(tools, map[string]any{"name": n, "url": target.URL + "/" + n})
	}
	tools = append(tools, map[string]any{"name": "closed", "url": closedURL})
	vm = open.vm(apiToken, map[string]any{"permissions": perms, "tools": tools})
	if got := call(open, vm, "ok"); got != `{"ok":true}` {
		t.Fatalf("allowed tool: %q", got)
	}
	for _, n := range []string{"401", "text", "redirect", "closed"} {
		if got := call(open, vm, n); got != refusedText {
			t.Errorf("tool %s failed as %q; a refused address reads %q", n, got, refusedText)
		}
	}
}

// TestAPIProcessQuotaAndLifetime (issue 19, finding 4): spawned processes
// that are never attached and JS contexts count against the tenant's
// --max-processes, and end at --max-process-lifetime, giving their slots
// back; another tenant is not affected. A context evaluation past its
// timeout answers 504 timeout.
func TestAPIProcessQuotaAndLifetime(t *testing.T) {
	s := newAPIServer(t, api.Config{MaxTenantProcesses: 2, MaxProcessLifetime: 3 * time.Second})
	vm := strings.TrimPrefix(s.vm(apiToken, nil), s.url)
	spawn := func(token, vm string) *apiAnswer {
		return s.req(token, "POST", vm+"/processes", map[string]any{"argv": []string{"sleep", "1000"}})
	}
	for i := 0; i < 2; i++ {
		if r := spawn(apiToken, vm); r.status != http.StatusCreated {
			t.Fatalf("spawn %d: %d %s", i, r.status, r.body)
		}
	}
	if r := spawn(apiToken, vm); r.status != http.StatusTooManyRequests || r.code() != "quota_exceeded" {
		t.Fatalf("third spawn: %d %s", r.status, r.body)
	}
	if r := s.req(apiToken, "POST", vm+"/contexts", map[string]any{}); r.status != http.StatusTooManyRequests {
		t.Fatalf("context over the quota: %d %s", r.status, r.body)
	}
	other := strings.TrimPrefix(s.vm(apiToken+"-other", nil), s.url)
	if r := spawn(apiToken+"-other", other); r.status != http.StatusCreated {
		t.Fatalf("the other tenant's spawn: %d %s", r.status, r.body)
	}
	// The lifetime ends them and gives the slots back.
	var list struct{ Processes []any }
	deadline := time.Now().Add(3*time.Second + 10*time.Second)
	for {
		_ = json.Unmarshal(s.req(apiToken, "GET", vm+"/processes", nil).body, &list)
		if len(list.Processes) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes still alive past their lifetime: %+v", list.Processes)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r := s.req(apiToken, "POST", vm+"/contexts", map[string]any{"timeout_ms": 500})
	if r.status != http.StatusCreated {
		t.Fatalf("context after the lifetime: %d %s", r.status, r.body)
	}
	var c struct{ ID string }
	_ = json.Unmarshal(r.body, &c)
	if r := s.req(apiToken, "POST", vm+"/contexts/"+c.ID+"/evaluate", map[string]any{"code": "while (true) {}"}); r.status != http.StatusGatewayTimeout || r.code() != "timeout" {
		t.Errorf("evaluation past its timeout: %d %s", r.status, r.body)
	}
	// The context too is closed at its lifetime.
	deadline = time.Now().Add(3*time.Second + 10*time.Second)
	for s.req(apiToken, "POST", vm+"/contexts/"+c.ID+"/evaluate", map[string]any{"code": "1"}).status != http.StatusNotFound {
		if time.Now().After(deadline) {
			t.Fatal("context alive past its lifetime")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Deleting a VM gives back the slots of its processes.
	for i := 0; i < 2; i++ {
		if r := spawn(apiToken, vm); r.status != http.StatusCreated {
			t.Fatalf("spawn after the lifetime %d: %d %s", i, r.status, r.body)
		}
	}
	if r := s.req(apiToken, "DELETE", vm, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete VM: %d %s", r.status, r.body)
	}
	vm2 := strings.TrimPrefix(s.vm(apiToken, nil), s.url)
	deadline = time.Now().Add(10 * time.Second)
	for r := spawn(apiToken, vm2); r.status != http.StatusCreated; r = spawn(apiToken, vm2) {
		if time.Now().After(deadline) {
			t.Fatalf("spawn after deleting the VM: %d %s", r.status, r.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
