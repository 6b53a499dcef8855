//go:build !wasip1

package main

import (
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/testcert"
	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
	"github.com/secexec/secexec/kernel/policy"
)

// These tests run the embedded curl.wasm and wget.wasm in a real VM and
// the host's curl and wget (the reference) against the same loopback
// servers, and compare what they print, how they end and what the server
// saw of each request.

// caFile is the PEM file both sides trust. The host's curl (OpenSSL) and
// the VM's TLS, which the kernel runs with Go's x509.SystemCertPool, read
// SSL_CERT_FILE; Go reads it once, at the first TLS handshake, so
// TestMain sets it before any test runs.
var caFile string

// certPEM and keyPEM are the trusted server certificate (self-signed,
// for 127.0.0.1 and localhost).
var certPEM, keyPEM []byte

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "curl-test-ca")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	certPEM, keyPEM = testcert.New(mainTB{}, false)
	caFile = filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, certPEM, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("SSL_CERT_FILE", caFile)
	defer os.RemoveAll(dir)
	vmtest.Main(m)
}

// mainTB lets testcert run before any test: it only reports failures.
type mainTB struct{ testing.TB }

func (mainTB) Helper() {}
func (mainTB) Fatal(args ...any) {
	fmt.Fprintln(os.Stderr, args...)
	os.Exit(1)
}

// seen is a request as the server saw it.
type seen struct {
	Method, URI, Host string
	Header            http.Header
	Body              string
}

func (s seen) String() string {
	var keys []string
	for k := range s.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s host=%s body=%q", s.Method, s.URI, s.Host, s.Body)
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %s: %q", k, s.Header[k])
	}
	return b.String()
}

// server is a loopback HTTP(S) server that records the requests it gets.
type server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
	port string
}

// fixedDate keeps the Date header the same for both clients.
const fixedDate = "Mon, 02 Jan 2006 15:04:05 GMT"

func newServer(t *testing.T, useTLS bool) *server {
	s := &server{}
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Custom", "yes")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "hello\n")
	})
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.WriteHeader(code)
		fmt.Fprintf(w, "status %d\n", code)
	})
	mux.HandleFunc("/redirect/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n <= 0 {
			http.Redirect(w, r, "/hello", http.StatusFound)
			return
		}
		http.Redirect(w, r, "/redirect/"+strconv.Itoa(n-1), http.StatusFound)
	})
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusFound)
	})
	mux.HandleFunc("/see-other", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/hello", http.StatusSeeOther)
	})
	mux.HandleFunc("/temporary", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/hello", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			io.WriteString(w, "plain body\n")
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, strings.Repeat("compressed body\n", 100))
		zw.Close()
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(8<<20))
		chunk := bytes.Repeat([]byte("0123456789abcde\n"), 4096)
		for i := 0; i < (8<<20)/len(chunk); i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/huge-header", func(w http.ResponseWriter, r *http.Request) {
		for i := range 64 {
			w.Header().Set(fmt.Sprintf("X-Big-%d", i), strings.Repeat("x", 8000))
		}
		io.WriteString(w, "unreachable\n")
	})
	mux.HandleFunc("/short", func(w http.ResponseWriter, r *http.Request) {
		c, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nDate: " + fixedDate + "\r\n\r\nonly ten\n")
		buf.Flush()
	})
	mux.HandleFunc("/short-chunked", func(w http.ResponseWriter, r *http.Request) {
		c, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		buf.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nDate: " + fixedDate + "\r\n\r\n5\r\nhello\r\n")
		buf.Flush()
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
			c.Close()
		}
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hd := r.Header.Clone()
		hd.Del("Accept-Encoding") // curl also offers br and zstd, which secexec's does not
		// Multipart boundaries are random.
		if _, params, err := mime.ParseMediaType(hd.Get("Content-Type")); err == nil && params["boundary"] != "" {
			b := params["boundary"]
			hd.Set("Content-Type", strings.ReplaceAll(hd.Get("Content-Type"), b, "BOUNDARY"))
			body = bytes.ReplaceAll(body, []byte(b), []byte("BOUNDARY"))
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, seen{Method: r.Method, URI: r.RequestURI, Host: r.Host, Header: hd, Body: string(body)})
		s.mu.Unlock()
		w.Header().Set("Date", fixedDate)
		mux.ServeHTTP(w, r)
	})
	s.Server = httptest.NewUnstartedServer(h)
	if useTLS {
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	_, s.port, _ = net.SplitHostPort(s.Listener.Addr().String())
	return s
}

// take returns and forgets the requests seen so far.
func (s *server) take() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reqs
	s.reqs = nil
	return r
}

// newVM makes a VM whose network policy denies everything but the
// given servers.
func newVM(t *testing.T, servers ...*server) *vmhost.Host {
	p := policy.AllowAll().DenyNet("*")
	for _, s := range servers {
		p.AllowNet("127.0.0.1:" + s.port)
	}
	return vmtest.NewHost(t, vmhost.Config{Policy: p})
}

// result is what one command printed, and how it ended.
type result struct {
	stdout, stderr string
	code           int
}

// hostSh runs a shell command on the host in dir, with the host's curl
// and wget.
func hostSh(t *testing.T, dir, stdin, script string) result {
	t.Helper()
	for _, tool := range []string{"/usr/bin/curl", "/usr/bin/wget"} {
		if _, err := os.Stat(tool); err != nil {
			t.Fatalf("host %s (the reference; .ci/run installs it): %v", tool, err)
		}
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	rc := filepath.Join(t.TempDir(), "wgetrc")
	// wget (GnuTLS) does not read SSL_CERT_FILE.
	if err := os.WriteFile(rc, []byte("ca_certificate = "+caFile+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8", "SSL_CERT_FILE=" + caFile,
		"CURL_HOME=" + dir, "WGETRC=" + rc, "no_proxy=*"}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

// vmSh runs a shell command in the VM, in a fresh directory.
func vmSh(t *testing.T, h *vmhost.Host, stdin, script string) result {
	t.Helper()
	r := vmtest.Run(t, h, stdin, nil, "sh", "-c", "d=$(mktemp -d) && cd \"$d\" && "+script)
	return result{r.Stdout, r.Stderr, r.Exit.Code}
}

// millis hides curl's timings.
var millis = regexp.MustCompile(`after \d+ (ms|milliseconds)`)

// compare runs script on the host and in the VM (URL in it replaced by
// the server's base URL) and compares stdout, the exit status, stderr
// (when checkStderr) and the requests the server saw.
func compare(t *testing.T, h *vmhost.Host, s *server, stdin, script string, checkStderr bool) {
	t.Helper()
	script = strings.ReplaceAll(script, "URL", s.URL)
	want := hostSh(t, t.TempDir(), stdin, script)
	wantReqs := s.take()
	vmStart := time.Now()
	got := vmSh(t, h, stdin, script)
	t.Logf("VM took %v: %s", time.Since(vmStart), script)
	gotReqs := s.take()
	if checkStderr {
		want.stderr = millis.ReplaceAllString(want.stderr, "after N $1")
		got.stderr = millis.ReplaceAllString(got.stderr, "after N $1")
	} else {
		want.stderr, got.stderr = "", ""
	}
	if got != want {
		t.Errorf("$ %s\nhost (exit %d):\n%s\n-- stderr:\n%s\nVM (exit %d):\n%s\n-- stderr:\n%s", script,
			want.code, want.stdout, want.stderr, got.code, got.stdout, got.stderr)
	}
	if fmt.Sprint(gotReqs) != fmt.Sprint(wantReqs) {
		t.Errorf("$ %s\nthe server saw from the host:\n%v\nand from the VM:\n%v", script, wantReqs, gotReqs)
	}
}

func TestCurlMatchesHost(t *testing.T) {
	s := newServer(t, false)
	h := newVM(t, s)
	for _, c := range []struct {
		script, stdin string
		stderr        bool
	}{
		{script: "curl -s URL/hello"},
		{script: "curl URL/hello", stderr: false},
		{script: "curl -sS -f URL/status/404", stderr: true},
		{script: "curl -f URL/status/500"},
		{script: "curl -s -f URL/status/404", stderr: true},
		{script: "curl -s URL/status/404"},
		{script: "curl -sSL URL/redirect/3"},
		{script: "curl -s URL/redirect/0"},
		{script: "curl -si URL/hello"},
		{script: "curl -sI URL/hello"},
		{script: "curl -sSiL URL/redirect/1"},
		{script: "curl -sSL --max-redirs 2 URL/redirect/5", stderr: true},
		{script: "curl -s -X PUT -H 'X-A: 1' -H 'Accept: application/json' -H 'User-Agent:' URL/hello"},
		{script: "curl -s -d a=1 -d 'b=2 3' URL/hello"},
		{script: "curl -s --data-binary @- URL/hello", stdin: "line1\nline2\n"},
		{script: "curl -s -d @- URL/hello", stdin: "line1\nline2\n"},
		{script: "curl -s --data-raw @x URL/hello"},
		{script: "curl -s --data-urlencode 'q=a b&c' --data-urlencode plain URL/hello"},
		{script: "curl -s -G -d q=1 -d r=2 URL/hello"},
		{script: `curl -s --json '{"a":1}' URL/hello`},
		{script: "curl -s -w '%{http_code} %{content_type} %{size_download} %{url_effective}\\n' -o /dev/null URL/hello"},
		{script: "curl -sL -w '%{http_code} %{num_redirects} %{url_effective}\\n' -o /dev/null URL/redirect/2"},
		{script: "curl -s -A agent/1 -u user:pass -e http://ref/ URL/hello"},
		{script: "curl -s --compressed URL/gzip"},
		{script: "curl -s URL/gzip"},
		{script: "curl -s -o out.txt URL/hello && cat out.txt"},
		{script: "curl -s -O URL/hello && cat hello"},
		{script: "curl -s -D - URL/hello"},
		{script: "curl -sSL -d x=1 URL/see-other"},
		{script: "curl -sSL -d x=1 URL/temporary"},
		{script: "curl -sSL -d x=1 URL/redirect/0"},
		{script: "curl -s -XPOST URL/hello"},
		{script: "curl -s -d '' URL/hello"},
		{script: "curl -sfi URL/status/404", stderr: true},
		{script: "curl -sSfL URL/redirect/1", stderr: true},
		{script: "curl -sSIL URL/redirect/1", stderr: true},
		{script: "curl -s -o /dev/null -w '%{http_code}' URL/status/404"},
		{script: "curl -sS -H 'Host: example.test' -H 'X-Empty;' URL/hello"},
		{script: "curl -s URL/hello URL/status/201"},
		{script: "curl -s -o a -o b URL/hello URL/status/201 && cat a b"},
		{script: "curl -sL -X POST URL/see-other"},
		{script: "curl -s --url URL/hello"},
		{script: "curl -sS --retry 1 -f URL/status/503", stderr: true},
		{script: "curl -s --retry 1 --retry-delay 1 URL/status/503"},
		{script: "curl -s --retry 2 URL/status/404"},
		{script: "curl -sS URL/short", stderr: true},
		{script: "curl -sS URL/short-chunked", stderr: true},
		{script: "curl -sS -o /dev/full URL/hello", stderr: true},
		{script: "curl -sS URL/hello > /dev/full", stderr: true},
		{script: "curl -sS -I -X GET URL/hello", stderr: true},
		{script: "curl -sS --fail-with-body URL/status/404", stderr: true},
		{script: "curl -sS -w '%{redirect_url}\\n' URL/redirect/0", stderr: true},
		{script: "curl -sS URL/close", stderr: true},
		{script: "curl -s URL/hello -o /nonexistent/dir/x", stderr: true},
		{script: "printf 'abc\\n' > file.txt && printf '<b/>' > x.html && curl -s -F a=1 -F 'f=@file.txt' -F 'g=<file.txt' -F 'h=@x.html;type=text/x' -F 'i=@file.txt;filename=other.bin' URL/hello"},
		{script: "curl -s -X DELETE URL/hello"},
		{script: "curl -s 127.0.0.1:" + s.port + "/hello"},
		{script: "curl -s URL/big | wc -c"},
		{script: "curl -sS 'ht tp://x'", stderr: true},
		{script: "curl -sS", stderr: true},
		{script: "curl --nope URL/hello", stderr: true},
	} {
		compare(t, h, s, c.stdin, c.script, c.stderr)
	}
}

func TestWgetMatchesHost(t *testing.T) {
	s := newServer(t, false)
	h := newVM(t, s)
	for _, c := range []string{
		"wget -qO- URL/hello",
		"wget -q -O - URL/hello",
		"wget -q -O - --header 'X-A: 1' --post-data 'a=1' URL/hello",
		"wget -qO- URL/status/404",
		"wget -qO- URL/redirect/2",
		"wget -q URL/hello && cat hello",
		"wget -q URL/hello && wget -q URL/hello && cat hello.1",
		"wget -q URL/ ; ls",
		"wget -q -O out URL/hello && cat out",
		"wget -q --spider URL/hello",
		"wget -q --spider URL/status/404",
		"wget -qO- -U agent URL/hello",
		"wget -qO- URL/status/500",
		"wget -q -t 2 -O - URL/status/503",
	} {
		compare(t, h, s, "", c, false)
	}
}

func TestCurlHTTPS(t *testing.T) {
	s := newServer(t, true)
	h := newVM(t, s)
	compare(t, h, s, "", "curl -sS URL/hello", true)
	compare(t, h, s, "", "curl -sSi URL/hello", true)
	compare(t, h, s, "", "curl -sSL URL/redirect/1", true)
	compare(t, h, s, "", "wget -qO- URL/hello", true)
}

// A server whose certificate nobody trusts fails verification (curl 60,
// wget 5) on both sides, before any request is sent; -k and
// --no-check-certificate accept it.
func TestCurlUntrustedServer(t *testing.T) {
	s := newServer(t, false)
	s.Close()
	other, otherKey := testcert.New(t, false)
	cert, err := tls.X509KeyPair(other, otherKey)
	if err != nil {
		t.Fatal(err)
	}
	s.Server = httptest.NewUnstartedServer(s.Config.Handler)
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.StartTLS()
	t.Cleanup(s.Close)
	_, s.port, _ = net.SplitHostPort(s.Listener.Addr().String())
	h := newVM(t, s)
	for _, c := range []struct {
		script string
		code   int
	}{
		{"curl -s URL/hello", 60},
		{"wget -qO- URL/hello", 5},
	} {
		script := strings.ReplaceAll(c.script, "URL", s.URL)
		want, got := hostSh(t, t.TempDir(), "", script), vmSh(t, h, "", script)
		if want.code != c.code || got.code != c.code || got.stdout != "" {
			t.Errorf("$ %s: host exit %d, VM exit %d (want %d), VM printed %q %q", script, want.code, got.code, c.code, got.stdout, got.stderr)
		}
		if reqs := s.take(); len(reqs) != 0 {
			t.Errorf("$ %s: the server saw %v", script, reqs)
		}
	}
	got := vmSh(t, h, "", strings.ReplaceAll("curl -sS URL/hello", "URL", s.URL))
	if !strings.HasPrefix(got.stderr, "curl: (60) SSL certificate problem") {
		t.Errorf("curl's message: %q", got.stderr)
	}
	compare(t, h, s, "", "curl -sSk URL/hello", true)
	compare(t, h, s, "", "curl -sS --insecure -i URL/hello", true)
	compare(t, h, s, "", "wget -q --no-check-certificate -O - URL/hello", true)
	// The restart that -k makes does not lose standard input.
	compare(t, h, s, "a=1&b=2", "curl -sSk -d @- URL/hello", true)
	// NODE_TLS_REJECT_UNAUTHORIZED is node's: curl and wget ignore it,
	// whichever way it is set.
	compare(t, h, s, "", "NODE_TLS_REJECT_UNAUTHORIZED=1 curl -sSk URL/hello", true)
	for _, c := range []struct {
		script string
		code   int
	}{
		{"NODE_TLS_REJECT_UNAUTHORIZED=0 curl -s URL/hello", 60},
		{"NODE_TLS_REJECT_UNAUTHORIZED=0 wget -q -O - URL/hello", 5},
	} {
		script := strings.ReplaceAll(c.script, "URL", s.URL)
		if got := vmSh(t, h, "", script); got.code != c.code || got.stdout != "" {
			t.Errorf("$ %s: exit %d (want %d), stdout %q", script, got.code, c.code, got.stdout)
		}
	}
	if reqs := s.take(); len(reqs) != 0 {
		t.Errorf("the server saw %v", reqs)
	}
}

// The VM's network policy denies by default: a server the policy does
// not name is not reached, and curl fails at once with status 7.
func TestCurlDenied(t *testing.T) {
	allowed := newServer(t, false)
	hidden := newServer(t, false)
	h := newVM(t, allowed)
	for _, c := range []struct {
		script, msg string
		code        int
	}{
		{"curl -sS http://10.1.2.3:8080/", "curl: (7) Failed to connect to 10.1.2.3 port 8080 after", 7},
		{"curl -sS http://example.com/", "curl: (7) Failed to connect to example.com port 80 after", 7},
		{"curl -sS https://example.com/", "curl: (7) Failed to connect to example.com port 443 after", 7},
		{"wget -O - http://example.com/", "Connecting to example.com:80... failed: Permission denied", 4},
		// The VM's own loopback, where nothing listens: the host's
		// server on that port is not reached.
		{"curl -sS " + hidden.URL + "/hello", "curl: (7) Failed to connect to 127.0.0.1 port " + hidden.port + " after", 7},
	} {
		start := time.Now()
		got := vmSh(t, h, "", c.script)
		policyNamed := strings.Contains(got.stderr, "network policy") || strings.Contains(c.script, hidden.URL)
		if got.code != c.code || !strings.Contains(got.stderr, c.msg) || !policyNamed || got.stdout != "" {
			t.Errorf("$ %s: exit %d, stdout %q, stderr %q; want exit %d and %q... (network policy)", c.script, got.code, got.stdout, got.stderr, c.code, c.msg)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("$ %s took %v", c.script, d)
		}
	}
	if reqs := hidden.take(); len(reqs) != 0 {
		t.Errorf("the hidden server saw %v", reqs)
	}
	// The allowed server is still reached.
	compare(t, h, allowed, "", "curl -sS URL/hello", true)
}

// A port the policy allows where nothing listens: curl's message and
// status 7, wget's 4.
func TestCurlRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	s := &server{port: port, Server: &httptest.Server{URL: "http://127.0.0.1:" + port}}
	h := newVM(t, s)
	compare(t, h, s, "", "curl -sS URL/", true)
	compare(t, h, s, "", "curl -s URL/", true)
	compare(t, h, s, "", "wget -q -O - URL/", true)
}

// --max-time bounds a transfer whose server never answers: status 28
// and curl's message, as the host's curl; wget -T gives up with 4.
func TestCurlMaxTime(t *testing.T) {
	s := newServer(t, false)
	h := newVM(t, s)
	start := time.Now()
	compare(t, h, s, "", "curl -sS -m 1 URL/hang", true)
	compare(t, h, s, "", "curl -sS --max-time 0.5 -o /dev/null URL/hang", true)
	compare(t, h, s, "", "wget -q -T 1 -t 1 -O - URL/hang", true)
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
}

// -v shows the request and response headers as sent, on stderr, and the
// body alone on stdout.
func TestCurlVerbose(t *testing.T) {
	s := newServer(t, false)
	h := newVM(t, s)
	got := vmSh(t, h, "", "curl -sv -H 'X-Trace: 1' "+s.URL+"/hello")
	if got.code != 0 || got.stdout != "hello\n" {
		t.Fatalf("exit %d, stdout %q", got.code, got.stdout)
	}
	for _, want := range []string{"*   Trying 127.0.0.1:" + s.port + "...", "* Connected to 127.0.0.1 (127.0.0.1) port " + s.port + " (#0)\n", "> GET /hello HTTP/1.1\r\n", "> Host: 127.0.0.1:" + s.port + "\r\n",
		"> User-Agent: curl/7.88.1\r\n", "> Accept: */*\r\n", "> X-Trace: 1\r\n", "< HTTP/1.1 200 OK\r\n", "< X-Custom: yes\r\n"} {
		if !strings.Contains(got.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, got.stderr)
		}
	}
}

// Response headers are bounded: a server that sends more than the limit
// gets an error, not a client that holds it all.
func TestCurlHeaderBound(t *testing.T) {
	s := newServer(t, false)
	h := newVM(t, s)
	got := vmSh(t, h, "", "curl -sS "+s.URL+"/huge-header")
	if got.code != 8 || got.stdout != "" || !strings.HasPrefix(got.stderr, "curl: (8) ") {
		t.Errorf("exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
	s.take()
	// Within the bound, everything arrives.
	compare(t, h, s, "", "curl -s URL/hello", true)
}

// A name that does not resolve is curl's status 6, as on the host.
func TestCurlUnresolvable(t *testing.T) {
	s := &server{Server: &httptest.Server{URL: "http://nonexistent.invalid"}}
	p := policy.AllowAll().DenyNet("*").AllowNet("nonexistent.invalid")
	h := vmtest.NewHost(t, vmhost.Config{Policy: p})
	start := time.Now()
	compare(t, h, s, "", "curl -sS URL/", true)
	compare(t, h, s, "", "wget -q -O - URL/", true)
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
}

// A server that never completes the TCP handshake (its accept queue is
// full, so its SYNs go unanswered): --connect-timeout and --max-time end
// the connect with curl's status 28 and messages.
func TestCurlConnectTimeout(t *testing.T) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
	// Fill the queue with connections nobody accepts.
	for range 4 {
		d := net.Dialer{Timeout: 200 * time.Millisecond}
		if c, err := d.Dial("tcp", "127.0.0.1:"+port); err == nil {
			t.Cleanup(func() { c.Close() })
		}
	}
	s := &server{port: port, Server: &httptest.Server{URL: "http://127.0.0.1:" + port}}
	h := newVM(t, s)
	start := time.Now()
	compare(t, h, s, "", "curl -sS --connect-timeout 1 URL/", true)
	compare(t, h, s, "", "curl -sS -m 1 URL/", true)
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}

// wget's progress report (on stderr) names the steps, the response and
// the file; -S shows the response headers indented.
func TestWgetReport(t *testing.T) {
	s := newServer(t, false)
	h := newVM(t, s)
	got := vmSh(t, h, "", "wget "+s.URL+"/hello && cat hello")
	for _, want := range []string{"--  " + s.URL + "/hello\n", "Connecting to 127.0.0.1:" + s.port + "... connected.\n",
		"HTTP request sent, awaiting response... 200 OK\n", "Length: 6 [text/plain; charset=utf-8]\n",
		"Saving to: ‘hello’\n", "- ‘hello’ saved [6/6]\n"} {
		if !strings.Contains(got.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, got.stderr)
		}
	}
	if got.code != 0 || got.stdout != "hello\n" {
		t.Errorf("exit %d, stdout %q", got.code, got.stdout)
	}
	got = vmSh(t, h, "", "wget -S -O /dev/null "+s.URL+"/hello")
	if !strings.Contains(got.stderr, "\n  HTTP/1.1 200 OK\n") || !strings.Contains(got.stderr, "\n  X-Custom: yes\n") || got.code != 0 {
		t.Errorf("wget -S: exit %d, stderr:\n%s", got.code, got.stderr)
	}
	got = vmSh(t, h, "", "wget -O - "+s.URL+"/status/404")
	if !strings.Contains(got.stderr, "ERROR 404: Not Found.\n") || got.code != 8 {
		t.Errorf("wget 404: exit %d, stderr:\n%s", got.code, got.stderr)
	}
}

// After a redirect to another host, curl sends neither -u's credentials
// nor Authorization and Cookie headers; other headers go on.
func TestCurlRedirectDropsCredentials(t *testing.T) {
	s1, s2 := newServer(t, false), newServer(t, false)
	h := newVM(t, s1, s2)
	script := "curl -sSL -u a:b -H 'Cookie: c=1' -H 'Authorization: Bearer x' -H 'X-Keep: 1' '" + s1.URL + "/to?u=" + s2.URL + "/hello'"
	want := hostSh(t, t.TempDir(), "", script)
	want1, want2 := s1.take(), s2.take()
	got := vmSh(t, h, "", script)
	got1, got2 := s1.take(), s2.take()
	if got != want || fmt.Sprint(got1) != fmt.Sprint(want1) || fmt.Sprint(got2) != fmt.Sprint(want2) {
		t.Errorf("host: %+v\n%v\n%v\nVM: %+v\n%v\n%v", want, want1, want2, got, got1, got2)
	}
	if len(got2) != 1 || got2[0].Header.Get("Authorization") != "" || got2[0].Header.Get("X-Keep") != "1" {
		t.Errorf("the second host saw %v", got2)
	}
}
