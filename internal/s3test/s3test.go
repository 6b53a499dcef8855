// Package s3test starts a real S3 server for tests: versitygw (a Go S3
// gateway) with its posix backend on a temporary directory, listening on
// a loopback port. The binary is built from the Go module proxy once
// (go install, cached outside the repository) and reused; a test never
// talks to an in-process double.
package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"golang.org/x/sys/unix"
)

// Module is the versitygw release the tests run.
const Module = "github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// EnvBinary names a versitygw binary to use instead of building one.
const EnvBinary = "SECEXEC_VERSITYGW"

// BinDir is where the binary is built (the same path .ci/run builds it
// to): outside the repository, kept between runs.
var BinDir = filepath.Join(os.TempDir(), "secexec-test-versitygw-v1.8.0")

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Binary returns the path of the versitygw binary, building it once; a
// build lock keeps test packages running at the same time from building
// it twice.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(EnvBinary); p != "" {
		return p
	}
	buildOnce.Do(func() { buildPath, buildErr = build() })
	if buildErr != nil {
		t.Fatalf("s3test: building versitygw: %v", buildErr)
	}
	return buildPath
}

func build() (string, error) {
	bin := filepath.Join(BinDir, "versitygw")
	if err := os.MkdirAll(BinDir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(BinDir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	cmd := exec.Command("go", "install", Module)
	// Outside any module, so the repository's go.mod and flags play no
	// part: the release builds as its own go.mod says.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOBIN="+BinDir, "GOWORK=off", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s: %w\n%s", Module, err, out)
	}
	return bin, nil
}

// Server is a running versitygw.
type Server struct {
	// Endpoint is its URL, http://127.0.0.1:PORT.
	Endpoint string
	// Bucket is a bucket made for the test.
	Bucket string
	// AccessKey and SecretKey are its root user's credentials.
	AccessKey, SecretKey string
	// Dir is the directory its posix backend keeps the buckets in (their
	// metadata, ETags included, in extended attributes).
	Dir string

	cmd  *exec.Cmd
	done chan struct{}
	log  bytes.Buffer
}

// Start starts a versitygw on a free loopback port, serving a new
// temporary directory, with a bucket made; t's cleanup stops it.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	s := &Server{Bucket: "secexec-test", Dir: t.TempDir(), done: make(chan struct{}),
		AccessKey: "test" + hex.EncodeToString(key[:4]), SecretKey: hex.EncodeToString(key)}
	port := freePort(t)
	s.Endpoint = "http://127.0.0.1:" + port
	s.cmd = exec.Command(bin, "--port", "127.0.0.1:"+port, "posix", s.Dir)
	// The root user's keys through its environment, not its argv.
	s.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.AccessKey, "ROOT_SECRET_ACCESS_KEY="+s.SecretKey)
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("s3test: start versitygw: %v", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(s.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := s.Client(t)
	for {
		err := c.MakeBucket(ctx, s.Bucket, minio.MakeBucketOptions{})
		if err == nil {
			break
		}
		select {
		case <-s.done:
			t.Fatalf("s3test: versitygw exited: %s", s.log.String())
		case <-ctx.Done():
			t.Fatalf("s3test: versitygw did not come up: %v\n%s", err, s.log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return s
}

// Client returns a client of the server with its root user's keys.
func (s *Server) Client(t testing.TB) *minio.Client {
	t.Helper()
	u, _ := url.Parse(s.Endpoint)
	c, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// URL returns the s3:// location of prefix in the test bucket.
func (s *Server) URL(prefix string) string {
	return "s3://" + s.Bucket + "/" + prefix + "?endpoint=" + url.QueryEscape(s.Endpoint) + "&region=us-east-1"
}

// PID returns the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Stop kills the server (as a crash would) and waits for it.
func (s *Server) Stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
	}
	<-s.done
}

func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
