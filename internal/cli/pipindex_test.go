package cli_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// wheel is a minimal pure-Python wheel of module greet.
func wheel(t *testing.T) []byte {
	t.Helper()
	files := []struct{ name, body string }{
		{"greet.py", "def hello():\n    return 'hello from the index'\n"},
		{"greet-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: greet\nVersion: 1.0\n"},
		{"greet-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: secexec-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var record strings.Builder
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString("greet-1.0.dist-info/RECORD,,\n")
	w, err := zw.Create("greet-1.0.dist-info/RECORD")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(record.String())); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// --allow-pip-index lets the VM's pip reach the index the host's pip uses
// (here PIP_INDEX_URL, a PEP 503 index on loopback) and points it there;
// without the flag the index is out of reach.
func TestAllowPipIndex(t *testing.T) {
	whl := wheel(t)
	sum := sha256.Sum256(whl)
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/greet/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<html><body><a href=\"../../files/greet-1.0-py3-none-any.whl#sha256=%x\">greet-1.0-py3-none-any.whl</a></body></html>\n", sum)
	})
	mux.HandleFunc("/files/greet-1.0-py3-none-any.whl", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(whl) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Setenv("PIP_INDEX_URL", srv.URL+"/simple")

	script := "python3 -m pip install -q --target /tmp/site greet && PYTHONPATH=/tmp/site:/opt/secexec/python python3 -c 'import greet; print(greet.hello())'"
	code, out, errOut := runCLI(t, "", "exec", "--allow-pip-index", "--", "sh", "-c", script)
	if code != 0 || out != "hello from the index\n" {
		t.Fatalf("with --allow-pip-index: exit %d stdout %q stderr %q", code, out, errOut)
	}
	// Credentials in the host's index URL stay on the host.
	t.Setenv("PIP_INDEX_URL", strings.Replace(srv.URL, "http://", "http://user:s3cret@", 1)+"/simple")
	code, out, errOut = runCLI(t, "", "exec", "--allow-pip-index", "--", "sh", "-c", "echo \"$PIP_INDEX_URL\"")
	if code != 0 || strings.Contains(out, "s3cret") || !strings.HasPrefix(out, "http://127.0.0.1:") {
		t.Fatalf("the VM's PIP_INDEX_URL: exit %d stdout %q stderr %q", code, out, errOut)
	}
	code, out, _ = runCLI(t, "", "exec", "--env", "PIP_INDEX_URL="+srv.URL+"/simple", "--", "sh", "-c", script)
	if code == 0 || strings.Contains(out, "hello") {
		t.Fatalf("without the flag the index was reached: exit %d stdout %q", code, out)
	}
}
