package cli_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/secexec/secexec/internal/cli"
	"github.com/secexec/secexec/internal/setup"
)

// serve --terminal builds the page into the cache directory; where npm
// cannot be run the server still starts and the page says it is not set
// up (and the log says why).
func TestServeTerminalPage(t *testing.T) {
	t.Setenv(setup.EnvCacheDir, t.TempDir())
	page := func() (int, string) {
		var logs strings.Builder
		h := cli.TerminalPage(context.Background(), slog.New(slog.NewTextHandler(&logs, nil)))
		srv := httptest.NewServer(h)
		defer srv.Close()
		r, err := http.Get(srv.URL + "/terminal/")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b) + logs.String()
	}
	path := t.TempDir() // no npm there
	orig := os.Getenv("PATH")
	t.Setenv("PATH", path)
	if code, body := page(); code != http.StatusServiceUnavailable || !strings.Contains(body, "not set up") {
		t.Fatalf("without npm: %d %q", code, body)
	}
	t.Setenv("PATH", orig)
	if code, body := page(); code != http.StatusOK || !strings.Contains(body, "terminal.js") {
		t.Fatalf("with npm: %d %q", code, body)
	}
}
