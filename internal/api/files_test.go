package api_test

import (
	"archive/tar"
	"bytes"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/api"
)

func TestFiles(t *testing.T) {
	s := newServer(t, api.Config{MaxFileBytes: 1 << 16})
	id := s.newVM(alice, nil)
	base := "/v1/vms/" + id + "/files"
	data := []byte{0, 1, 2, 0xff, 0xfe, '\n'}
	if r := s.do(alice, "PUT", base+"/workspace/deep/dir/f.bin", data); r.status != http.StatusNoContent {
		t.Fatalf("put: %d %s", r.status, r.body)
	}
	r := s.do(alice, "GET", base+"/workspace/deep/dir/f.bin", nil)
	if r.status != 200 || !bytes.Equal(r.body, data) || r.header.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("get: %d %q", r.status, r.body)
	}
	// The guest sees the same bytes.
	if _, res := s.exec(alice, id, map[string]any{"argv": []string{"cat", "/workspace/deep/dir/f.bin"}}); !bytes.Equal(res.Stdout, data) {
		t.Fatalf("guest read %q", res.Stdout)
	}
	var st struct {
		Name, Type string
		Size       int64
	}
	s.do(alice, "GET", base+"/workspace/deep/dir/f.bin?stat", nil).json(t, &st)
	if st.Name != "f.bin" || st.Type != "file" || st.Size != int64(len(data)) {
		t.Errorf("stat: %+v", st)
	}
	s.do(alice, "PUT", base+"/workspace/deep/sub?mkdir", nil)
	var list struct{ Entries []struct{ Name, Type string } }
	s.do(alice, "GET", base+"/workspace/deep?list", nil).json(t, &list)
	if len(list.Entries) != 2 || list.Entries[0].Name != "dir" || list.Entries[1].Name != "sub" || list.Entries[1].Type != "dir" {
		t.Errorf("list: %+v", list)
	}
	for _, c := range []struct {
		method, path string
		body         any
		status       int
		code         string
	}{
		{"GET", base + "/workspace/missing", nil, 404, "not_found"},
		{"GET", base + "/workspace/deep", nil, 400, "bad_request"},
		{"DELETE", base + "/workspace/deep", nil, 409, "conflict"},
		{"DELETE", base + "/workspace/missing?recursive", nil, 404, "not_found"},
		{"PUT", base + "/workspace/big", bytes.Repeat([]byte("x"), 1<<16+1), 413, "too_large"},
		{"PUT", base + "/workspace/deep/dir/f.bin/below", []byte("x"), 400, "bad_request"},
		{"DELETE", base + "/", nil, 400, "bad_request"},
	} {
		r := s.do(alice, c.method, c.path, c.body)
		if r.status != c.status || r.errCode(t) != c.code {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.status, r.body)
		}
	}
	// A file grown past the limit by the guest is refused, not sent.
	s.exec(alice, id, map[string]any{"cmd": "head -c 70000 /dev/zero > /workspace/huge"})
	if r := s.do(alice, "GET", base+"/workspace/huge", nil); r.status != 413 {
		t.Errorf("huge read: %d", r.status)
	}
	// {path} percent-encoded as one segment, as generated clients send
	// it, names the same file.
	if r := s.do(alice, "GET", base+"/workspace%2Fdeep%2Fdir%2Ff.bin", nil); r.status != 200 || !bytes.Equal(r.body, data) {
		t.Errorf("encoded path: %d %q", r.status, r.body)
	}
	if r := s.do(alice, "PUT", base+"/workspace%2Fdeep%2Fsp%20ace.txt", []byte("x")); r.status != http.StatusNoContent {
		t.Errorf("encoded put: %d %s", r.status, r.body)
	}
	if _, res := s.exec(alice, id, map[string]any{"argv": []string{"cat", "/workspace/deep/sp ace.txt"}}); string(res.Stdout) != "x" {
		t.Errorf("encoded put landed elsewhere: %q", res.Stdout)
	}
	// Paths with .. stay inside the VM (they are guest paths).
	if r := s.do(alice, "GET", base+"/workspace/../workspace/deep/dir/f.bin", nil); r.status != 200 {
		t.Errorf("dotdot: %d", r.status)
	}
	if r := s.do(alice, "DELETE", base+"/workspace/deep?recursive", nil); r.status != 204 {
		t.Errorf("recursive delete: %d %s", r.status, r.body)
	}
	if r := s.do(alice, "GET", base+"/workspace/deep?stat", nil); r.status != 404 {
		t.Errorf("after delete: %d", r.status)
	}
}

type tarFile struct {
	name, body, link string
	typ              byte
}

func makeTar(t *testing.T, files []tarFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Typeflag: f.typ, Mode: 0o644, Size: int64(len(f.body)), Linkname: f.link}
		if f.typ == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte(f.body))
		}
	}
	tw.Close()
	return buf.Bytes()
}

func readTar(t *testing.T, data []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		switch h.Typeflag {
		case tar.TypeDir:
			out[h.Name] = "dir"
		case tar.TypeSymlink:
			out[h.Name] = "-> " + h.Linkname
		default:
			out[h.Name] = string(b)
		}
	}
}

func TestArchiveRoundTrip(t *testing.T) {
	s := newServer(t, api.Config{})
	id := s.newVM(alice, nil)
	in := makeTar(t, []tarFile{
		{name: "src/", typ: tar.TypeDir},
		{name: "src/main.js", body: "console.log(1)\n"},
		{name: "./README", body: "hi"},
		{name: "bin/tool", body: "\x00\x01bin"},
		{name: "link", typ: tar.TypeSymlink, link: "src/main.js"},
	})
	if r := s.do(alice, "PUT", "/v1/vms/"+id+"/archive?path=/workspace/proj", in); r.status != 204 {
		t.Fatalf("put archive: %d %s", r.status, r.body)
	}
	if _, res := s.exec(alice, id, map[string]any{"cmd": "cd /workspace/proj && cat link README"}); string(res.Stdout) != "console.log(1)\nhi" {
		t.Fatalf("guest sees %q %q", res.Stdout, res.Stderr)
	}
	r := s.do(alice, "GET", "/v1/vms/"+id+"/archive?path=/workspace/proj", nil)
	if r.status != 200 || r.header.Get("Content-Type") != "application/x-tar" {
		t.Fatalf("get archive: %d %s", r.status, r.body)
	}
	got := readTar(t, r.body)
	want := map[string]string{"src/": "dir", "src/main.js": "console.log(1)\n", "README": "hi", "bin/": "dir", "bin/tool": "\x00\x01bin", "link": "-> src/main.js"}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(got) != len(want) {
		t.Fatalf("archive has %v", keys)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

// TestArchiveAttacks: hostile archives are refused with bad_archive and
// write nothing outside the target directory.
func TestArchiveAttacks(t *testing.T) {
	s := newServer(t, api.Config{MaxFileBytes: 1 << 20})
	id := s.newVM(alice, nil)
	for name, files := range map[string][]tarFile{
		"dotdot":        {{name: "../escaped", body: "x"}},
		"nested dotdot": {{name: "a/../../escaped", body: "x"}},
		"absolute":      {{name: "/workspace/escaped", body: "x"}},
		"hardlink":      {{name: "h", typ: tar.TypeLink, link: "/etc/passwd"}},
		"device":        {{name: "d", typ: tar.TypeChar}},
		"fifo":          {{name: "p", typ: tar.TypeFifo}},
	} {
		r := s.do(alice, "PUT", "/v1/vms/"+id+"/archive?path=/workspace/t", makeTar(t, files))
		if r.status != 400 || r.errCode(t) != "bad_archive" {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	// A symlink pointing out followed by a file "through" it: the link is
	// made after the files, so the file lands in a real directory.
	in := makeTar(t, []tarFile{{name: "out", typ: tar.TypeSymlink, link: "/etc"}, {name: "out/pwned", body: "x"}})
	if r := s.do(alice, "PUT", "/v1/vms/"+id+"/archive?path=/workspace/s", in); r.status == 204 {
		t.Errorf("a symlink over a directory the archive made was accepted")
	}
	if _, res := s.exec(alice, id, map[string]any{"cmd": "ls /workspace/escaped /escaped /etc/pwned 2>&1 | wc -l; ls /workspace"}); !strings.HasPrefix(string(res.Stdout), "3\n") {
		t.Errorf("something escaped: %q", res.Stdout)
	}
	// Garbage and oversized bodies.
	if r := s.do(alice, "PUT", "/v1/vms/"+id+"/archive?path=/workspace/g", bytes.Repeat([]byte{0xff}, 2048)); r.status != 400 || r.errCode(t) != "bad_archive" {
		t.Errorf("garbage: %d %s", r.status, r.body)
	}
	big := makeTar(t, []tarFile{{name: "big", body: strings.Repeat("x", 2<<20)}})
	if r := s.do(alice, "PUT", "/v1/vms/"+id+"/archive?path=/workspace/b", big); r.status != 413 {
		t.Errorf("big: %d %s", r.status, r.body)
	}
	for _, p := range []string{"", "relative", "/workspace/a%00b"} {
		if r := s.do(alice, "GET", "/v1/vms/"+id+"/archive?path="+p, nil); r.status != 400 {
			t.Errorf("path %q: %d", p, r.status)
		}
	}
	// An archive of a tree over the limit is refused before any byte.
	s.exec(alice, id, map[string]any{"cmd": "mkdir -p /workspace/big && head -c 1100000 /dev/zero > /workspace/big/f"})
	if r := s.do(alice, "GET", "/v1/vms/"+id+"/archive?path=/workspace/big", nil); r.status != 413 {
		t.Errorf("big archive: %d", r.status)
	}
}
