package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/api"
	"github.com/secexec/secexec/internal/termpage"
)

// webDriver speaks the W3C WebDriver protocol to chromedriver: plain
// JSON over HTTP.
type webDriver struct {
	t    *testing.T
	base string // http://127.0.0.1:PORT/session/ID
}

func (d *webDriver) call(method, path string, body any) json.RawMessage {
	d.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, d.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("webdriver %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var v struct{ Value json.RawMessage }
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &v); err != nil || resp.StatusCode != http.StatusOK {
		d.t.Fatalf("webdriver %s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	return v.Value
}

// script runs JavaScript in the page and returns its string result.
func (d *webDriver) script(js string, args ...any) string {
	d.t.Helper()
	if args == nil {
		args = []any{}
	}
	var s string
	_ = json.Unmarshal(d.call("POST", "/execute/sync", map[string]any{"script": js, "args": args}), &s)
	return s
}

// waitFor polls ok until it holds, for at most a minute.
func (d *webDriver) waitFor(what string, ok func() bool) {
	d.t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ok() {
			return
		}
	}
	d.t.Fatalf("gave up waiting for %s; screen:\n%s\nstatus: %s", what, d.screen(), d.script(`return document.getElementById("status").textContent`))
}

func (d *webDriver) screen() string {
	return d.script(`const r = document.querySelector(".xterm-rows"); return r ? Array.from(r.children, (c) => c.textContent).join("\n") : "";`)
}

func (d *webDriver) element(css string) string {
	d.t.Helper()
	var e map[string]string
	_ = json.Unmarshal(d.call("POST", "/element", map[string]any{"using": "css selector", "value": css}), &e)
	for _, id := range e {
		return id
	}
	d.t.Fatalf("no element %s", css)
	return ""
}

func (d *webDriver) typeInto(css, text string) {
	d.call("POST", "/element/"+d.element(css)+"/value", map[string]any{"text": text})
}

// TestTerminalPageInChromium opens the terminal page in headless
// Chromium against a real server, enters the token, types a command and
// sees its output, then resizes the window and sees `stty size` change.
func TestTerminalPageInChromium(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir, err := termpage.Build(ctx, termpage.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, stop, done := serveAsync(t, api.ServeOptions{Terminal: termpage.Handler("/terminal/", dir)})
	defer func() { stop(); <-done }()

	ln := listen(t)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	drv := exec.CommandContext(ctx, "chromedriver", fmt.Sprintf("--port=%d", port))
	if err := drv.Start(); err != nil {
		t.Fatalf("chromedriver (Debian's chromium-driver; .ci/run installs it): %v", err)
	}
	defer func() { _ = drv.Process.Kill(); _ = drv.Wait() }()
	root := fmt.Sprintf("http://127.0.0.1:%d", port)
	d := &webDriver{t: t, base: root}
	d.waitFor("chromedriver", func() bool {
		r, err := http.Get(root + "/status")
		if err == nil {
			r.Body.Close()
		}
		return err == nil && r.StatusCode == http.StatusOK
	})
	var sess struct{ SessionID string }
	_ = json.Unmarshal(d.call("POST", "/session", map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{"args": []string{"--headless=new", "--no-sandbox", "--disable-gpu",
			"--disable-dev-shm-usage", "--window-size=900,600"}},
	}}}), &sess)
	d.base = root + "/session/" + sess.SessionID
	defer d.call("DELETE", "", nil)

	d.call("POST", "/url", map[string]any{"url": s.url + "/terminal/"})
	d.typeInto("#token", alice)
	d.call("POST", "/element/"+d.element("#connect")+"/click", map[string]any{})
	d.waitFor("the VM list", func() bool { return d.script(`return String(!document.getElementById("open").disabled)`) == "true" })
	if u := d.script(`return location.href`); strings.Contains(u, alice) {
		t.Fatalf("the token is in the URL %s", u)
	}
	d.call("POST", "/element/"+d.element("#open")+"/click", map[string]any{})
	d.waitFor("the shell", func() bool {
		return strings.Contains(d.script(`return document.getElementById("status").textContent`), "Connected")
	})

	d.typeInto(".xterm-helper-textarea", "echo hello-$((6*7))\n")
	d.waitFor("hello-42", func() bool {
		return strings.Contains(d.screen(), "\nhello-42") || strings.HasPrefix(d.screen(), "hello-42")
	})

	size := regexp.MustCompile(`(?m)^size=(\d+) (\d+)`)
	sizes := func() []string {
		var out []string
		for _, m := range size.FindAllStringSubmatch(d.screen(), -1) {
			out = append(out, m[1]+"x"+m[2])
		}
		return out
	}
	d.typeInto(".xterm-helper-textarea", "echo size=$(stty size)\n")
	d.waitFor("the first stty size", func() bool { return len(sizes()) == 1 })
	before := sizes()[0]
	d.call("POST", "/window/rect", map[string]any{"width": 1300, "height": 900})
	d.typeInto(".xterm-helper-textarea", "clear; echo size=$(stty size)\n")
	d.waitFor("a changed stty size", func() bool { got := sizes(); return len(got) == 1 && got[0] != before })
	t.Logf("stty size %s, after the resize %s", before, sizes()[0])
}
