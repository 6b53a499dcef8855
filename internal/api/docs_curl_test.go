package api_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// docToken is the token the docs' examples use: README's server is
// started with SECEXEC_API_TOKEN=secret, docs/api.md's read $TOKEN.
const docToken = "secret"

// docAddr is the address the docs' examples reach the server at (serve's
// default --listen); the test puts its server's address in its place.
var docAddr = regexp.MustCompile(`(http://)?(127\.0\.0\.1|localhost):8080`)

// A line that starts a server in the background: the test has started
// one already.
var startsServer = regexp.MustCompile(`(?m)^.*secexec serve.*&\s*$`)

// curlCall finds each curl invocation and the options that follow it.
var curlCall = regexp.MustCompile(`(^|[|(;&]\s*|\$\(|\s)curl\s([^|;)]*)`)

// shellBlocks returns the ```sh blocks of markdown that run curl, in
// order; section, if not empty, limits them to that "## " section.
func shellBlocks(t *testing.T, markdown, section string) []string {
	t.Helper()
	if section != "" {
		i := strings.Index(markdown, "\n## "+section+"\n")
		if i < 0 {
			t.Fatalf("no section %q", section)
		}
		markdown = markdown[i+1:]
		if j := strings.Index(markdown[3:], "\n## "); j >= 0 {
			markdown = markdown[:j+3]
		}
	}
	var blocks []string
	for rest := markdown; ; {
		i := strings.Index(rest, "```sh\n")
		if i < 0 {
			return blocks
		}
		rest = rest[i+len("```sh\n"):]
		j := strings.Index(rest, "```\n")
		if j < 0 {
			t.Fatal("an unterminated ```sh block")
		}
		if block := rest[:j]; strings.Contains(block, "curl ") {
			blocks = append(blocks, block)
		}
		rest = rest[j:]
	}
}

// hasFail matches curl's -f (alone or among short options) or --fail.
var hasFail = regexp.MustCompile(`\s(-[a-zA-Z]*f[a-zA-Z]*|--fail(-with-body)?)\s`)

// checkFails fails t for each curl call in script without -f or
// --fail: an error status would pass unseen.
func checkFails(t *testing.T, script string) {
	t.Helper()
	for _, m := range curlCall.FindAllStringSubmatch(script, -1) {
		opts := " " + m[2]
		if !hasFail.MatchString(opts + " ") {
			t.Errorf("curl without -f: curl %s", strings.TrimSpace(m[2]))
		}
	}
}

// startServe runs `secexec serve` (this test binary as the CLI) on a
// free loopback port with the docs' token and extra flags, and returns
// its address once it is ready.
func startServe(t *testing.T, flags ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--listen", addr}, flags...)...)
	cmd.Env = append(os.Environ(), cliEnv+"=1", "SECEXEC_API_TOKEN="+docToken)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := <-done; err != nil {
			t.Errorf("secexec serve: %v", err)
		}
	})
	// Ready is an event, not a time: poll /readyz until it answers 200
	// or the server exits.
	for {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("secexec serve exited before it was ready: %v", err)
		default:
		}
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDocsCurlExamples runs every ```sh block with curl in docs/api.md
// and in README's "The HTTP API" section, each file's blocks in order as
// one bash script, against a real `secexec serve`, and fails on a curl
// failure or an error status (every call must use -f), or any failed
// command of the script.
func TestDocsCurlExamples(t *testing.T) {
	addr := startServe(t)
	home := t.TempDir()
	// Every call bounded: curl reads $CURL_HOME/.curlrc.
	if err := os.WriteFile(filepath.Join(home, ".curlrc"), []byte("max-time = 60\nconnect-timeout = 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, doc := range []struct{ file, section string }{
		{"../../docs/api.md", ""},
		{"../../README.md", "The HTTP API"},
	} {
		t.Run(filepath.Base(doc.file), func(t *testing.T) {
			md, err := os.ReadFile(doc.file)
			if err != nil {
				t.Fatal(err)
			}
			blocks := shellBlocks(t, string(md), doc.section)
			if len(blocks) == 0 {
				t.Fatalf("%s: no curl examples", doc.file)
			}
			script := strings.Join(blocks, "\n")
			checkFails(t, script)
			script = startsServer.ReplaceAllString(script, "")
			script = docAddr.ReplaceAllStringFunc(script, func(m string) string {
				if strings.HasPrefix(m, "http://") {
					return "http://" + addr
				}
				return addr
			})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail\nshopt -s inherit_errexit\n"+script)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "TOKEN="+docToken, "CURL_HOME="+home)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: the examples failed: %v\n--- script\n%s\n--- output\n%s", doc.file, err, script, out)
			}
			t.Logf("%s:\n%s", doc.file, out)
		})
	}
}
