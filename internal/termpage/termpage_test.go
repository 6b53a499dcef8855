package termpage_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/termpage"
)

// TestBuildAndServe fetches xterm.js with npm (pinned, verified),
// bundles the page and serves it; before the build the page says it is
// not set up.
func TestBuildAndServe(t *testing.T) {
	cache := t.TempDir()
	if _, err := termpage.Dir(cache); !errors.Is(err, termpage.ErrNotSetUp) {
		t.Fatalf("Dir before Build: %v", err)
	}
	off := httptest.NewServer(termpage.Handler("/terminal/", ""))
	defer off.Close()
	if code, body := get(t, off.URL+"/terminal/"); code != http.StatusServiceUnavailable || !strings.Contains(body, "not set up") {
		t.Fatalf("not set up: %d %q", code, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir, err := termpage.Build(ctx, termpage.Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	again, err := termpage.Build(ctx, termpage.Options{CacheDir: cache})
	if err != nil || again != dir {
		t.Fatalf("second Build: %q %v, want %q", again, err, dir)
	}
	srv := httptest.NewServer(termpage.Handler("/terminal/", dir))
	defer srv.Close()
	for path, want := range map[string]string{
		"/terminal/":             `<script src="terminal.js">`,
		"/terminal/terminal.js":  "secexec.token.",
		"/terminal/terminal.css": ".xterm",
	} {
		if code, body := get(t, srv.URL+path); code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("%s: %d, want %q in %.200q", path, code, want, body)
		}
	}
	if code, _ := get(t, srv.URL+"/terminal/../go.mod"); code != http.StatusNotFound {
		t.Errorf("a path outside the page: %d", code)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	r, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(b)
}
