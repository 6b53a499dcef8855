package webget

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// These tests run the commands on the host (netconn dials with the net
// package there); userland/curl runs them in a VM against host curl.

func run(t *testing.T, name string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(append([]string{name}, args...), Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}, "curl")
	return out.String(), errb.String(), code
}

func TestCurlUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  string
		code int
	}{
		{[]string{"--nope"}, "curl: option --nope: is unknown\n" + curlTry, 2},
		{[]string{"-Z", "x"}, "curl: option -Z: is unknown\n" + curlTry, 2},
		{[]string{"-o"}, "curl: option -o: requires parameter\n" + curlTry, 2},
		{[]string{"-s"}, "curl: no URL specified!\n" + curlTry, 2},
		{[]string{"-sS", "ht tp://x"}, "curl: (3) URL using bad/illegal format or missing URL\n", 3},
		{[]string{"-sS", "ftp://x/"}, "curl: (1) Protocol \"ftp\" not supported or disabled in libcurl\n", 1},
		{[]string{"-sS", "-m", "soon", "x"}, "curl: (2) expected a proper numerical parameter\n", 2},
	} {
		out, errs, code := run(t, "curl", "", c.args...)
		if out != "" || errs != c.err || code != c.code {
			t.Errorf("curl %q: exit %d, stdout %q, stderr %q; want %d %q", c.args, code, out, errs, c.code, c.err)
		}
	}
}

func TestWgetUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"--nope", "x"}, "wget: unrecognized option '--nope'\n" + wgetTry},
		{[]string{"-Z"}, "wget: invalid option -- 'Z'\n" + wgetTry},
		{[]string{"-q"}, "wget: missing URL\n" + wgetTry},
		{[]string{"-T", "x", "u"}, "wget: --timeout: Invalid time period ‘x’\n"},
	} {
		out, errs, code := run(t, "/usr/bin/wget", "", c.args...)
		if out != "" || errs != c.err || code != wgetParse {
			t.Errorf("wget %q: exit %d, stdout %q, stderr %q; want %d %q", c.args, code, out, errs, wgetParse, c.err)
		}
	}
}

// Informational (1xx) responses come before the final one, and -i shows
// every header block as the server sent it, spelling and order kept.
func TestCurlRawHeaders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["link"] = []string{"</a.css>; rel=preload"}
		w.WriteHeader(http.StatusEarlyHints)
		h := w.Header()
		delete(h, "link")
		h["Date"] = []string{"x"}
		h["zeta"] = []string{"1"}
		h["Alpha"] = []string{"2"}
		io.WriteString(w, "body")
	}))
	defer srv.Close()
	out, errs, code := run(t, "curl", "", "-si", srv.URL)
	want := "HTTP/1.1 103 Early Hints\r\nlink: </a.css>; rel=preload\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nAlpha: 2\r\nDate: x\r\nzeta: 1\r\nContent-Length: 4\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nbody"
	if out != want || code != 0 {
		t.Errorf("exit %d, stderr %q, stdout:\n%q\nwant\n%q", code, errs, out, want)
	}
}

// A request without a body carries no Content-Length, as curl's, though
// net/http writes one for POST, PUT and PATCH.
func TestCurlNoLengthWithoutBody(t *testing.T) {
	var got []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Clone())
	}))
	defer srv.Close()
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		if _, errs, code := run(t, "curl", "", "-sS", "-X", m, srv.URL); code != 0 {
			t.Fatalf("%s: %d %s", m, code, errs)
		}
	}
	if _, errs, code := run(t, "curl", "", "-sS", "-d", "", srv.URL); code != 0 {
		t.Fatalf("-d '': %d %s", code, errs)
	}
	for i, h := range got[:4] {
		if _, ok := h["Content-Length"]; ok {
			t.Errorf("request %d has Content-Length %q", i, h["Content-Length"])
		}
	}
	if len(got) != 5 || got[4].Get("Content-Type") != "application/x-www-form-urlencoded" || got[4].Get("Content-Length") != "0" {
		t.Errorf("-d '' sent %v", got)
	}
}

func TestCurlWriteOut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/x")
		w.WriteHeader(201)
		io.WriteString(w, "12345")
	}))
	defer srv.Close()
	out, errs, code := run(t, "curl", "", "-s", "-o", os.DevNull, "-w", `%{http_code}\t%{content_type}|%{size_download}|%{method}|%%|%{nope}\n`, srv.URL)
	if out != "201\ttext/x|5|GET|%|\n" || code != 0 || errs != "curl: unknown --write-out variable: 'nope'\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestDeflateReader(t *testing.T) {
	text := strings.Repeat("deflated text ", 50)
	var z, raw bytes.Buffer
	zw := zlib.NewWriter(&z)
	io.WriteString(zw, text)
	zw.Close()
	fw, _ := flate.NewWriter(&raw, flate.BestCompression)
	io.WriteString(fw, text)
	fw.Close()
	for name, b := range map[string][]byte{"zlib": z.Bytes(), "raw": raw.Bytes()} {
		got, err := io.ReadAll(&deflateReader{r: bytes.NewReader(b)})
		if err != nil || string(got) != text {
			t.Errorf("%s: %v, %d bytes", name, err, len(got))
		}
	}
}

// A failed transfer leaves no -o file; wget's file names avoid taken
// ones.
func TestOutputFiles(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "data "+r.URL.Path)
	}))
	defer srv.Close()
	dir := t.TempDir()
	t.Chdir(dir)
	if _, _, code := run(t, "curl", "", "-sf", "-o", "out", srv.URL+"/missing"); code != 22 {
		t.Errorf("curl -f: exit %d", code)
	}
	if _, err := os.Stat("out"); err == nil {
		t.Error("curl -f left its output file")
	}
	if _, errs, code := run(t, "curl", "", "-s", "--create-dirs", "-o", "a/b/out", srv.URL+"/x"); code != 0 {
		t.Fatalf("curl --create-dirs: %d %s", code, errs)
	}
	for i := 0; i < 2; i++ {
		if _, errs, code := run(t, "wget", "", "-q", srv.URL+"/f.txt"); code != 0 {
			t.Fatalf("wget: %d %s", code, errs)
		}
	}
	for name, want := range map[string]string{"a/b/out": "data /x", "f.txt": "data /f.txt", "f.txt.1": "data /f.txt"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
}
