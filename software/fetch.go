package software

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/secexec/secexec/internal/textfmt"
)

// npmPack runs `npm pack SPEC --pack-destination DIR --json` and returns the
// path of the tarball it wrote into dir. The registry is whatever the user's
// npm is configured with; none is named here.
func (s *Store) npmPack(ctx context.Context, pin Pin, dir string) (string, error) {
	return npmPack(ctx, s.npm, pin, dir)
}

// npmPackTimeout bounds one npm pack: npm has been seen to stall on a
// registry connection for many minutes. A stalled attempt is retried
// once; a set-up never hangs on it.
var npmPackTimeout = 4 * time.Minute

// npmPack runs npmExe pack for pin in dir (see Store.npmPack), retrying
// once an attempt that ran out of time.
func npmPack(ctx context.Context, npmExe string, pin Pin, dir string) (string, error) {
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, npmPackTimeout)
		name, err := npmPackOnce(actx, npmExe, pin, dir)
		stalled := actx.Err() != nil && ctx.Err() == nil
		cancel()
		if err == nil || !stalled || attempt == 2 {
			if err != nil && stalled {
				err = &FetchError{Spec: pin.Spec(), Err: fmt.Errorf("npm pack did not finish in %v, twice: %w", npmPackTimeout, context.DeadlineExceeded)}
			}
			return name, err
		}
	}
}

// npmPackOnce is one npm pack.
func npmPackOnce(ctx context.Context, npmExe string, pin Pin, dir string) (string, error) {
	fail := func(err error, stderr string) *FetchError {
		return &FetchError{Spec: pin.Spec(), Err: err, Stderr: stderr}
	}
	npm, err := exec.LookPath(npmExe)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = &exec.Error{Name: npmExe, Err: exec.ErrNotFound} // a path to nothing
		}
		return "", fail(err, "")
	}
	cmd := exec.CommandContext(ctx, npm, "pack", pin.Spec(),
		"--pack-destination", dir, "--json", "--ignore-scripts")
	// Run inside the empty download directory so no project's package.json
	// or .npmrc in the caller's working directory is consulted.
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	stdout := &cappedBuffer{max: 1 << 20}
	stderr := &cappedBuffer{max: 8 << 10, keepTail: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// npm may leave children holding the pipes after a kill; do not wait
	// for them forever.
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		// With --json, npm also reports failures as {"error": {...}} on
		// stdout; its summary is the clearest message there is.
		var jerr struct {
			Error struct{ Code, Summary string } `json:"error"`
		}
		if json.Unmarshal(stdout.Bytes(), &jerr) == nil && jerr.Error.Summary != "" {
			err = fmt.Errorf("%w: %s %s", err, jerr.Error.Code, jerr.Error.Summary)
			fe := fail(err, textfmt.LastLines(stderr.String(), 5))
			fe.summarized = true
			return "", fe
		}
		return "", fail(err, textfmt.LastLines(stderr.String(), 5))
	}

	// The integrity npm reports is not trusted: the tarball is hashed
	// against the pin before use.
	var out []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out) != 1 {
		if err == nil {
			err = fmt.Errorf("npm reported %d tarballs, want 1", len(out))
		}
		return "", fail(fmt.Errorf("reading npm's JSON output: %w", err), textfmt.LastLines(stderr.String(), 5))
	}
	name := out[0].Filename
	// npm names scoped tarballs "scope-name-version.tgz"; accept only a
	// plain file name inside dir.
	if name == "" || filepath.Base(name) != name || !strings.HasSuffix(name, ".tgz") {
		return "", fail(fmt.Errorf("npm reported tarball name %q", name), "")
	}
	return filepath.Join(dir, name), nil
}

// cappedBuffer keeps at most max bytes of what is written: the first max
// bytes, or with keepTail the last max bytes. It never fails a write, so a
// chatty child cannot block or exhaust memory.
type cappedBuffer struct {
	buf      bytes.Buffer
	max      int
	keepTail bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if c.keepTail {
		c.buf.Write(p)
		if extra := c.buf.Len() - c.max; extra > 0 {
			c.buf.Next(extra)
			// Compact so the buffer does not grow with what was dropped.
			b := bytes.Clone(c.buf.Bytes())
			c.buf.Reset()
			c.buf.Write(b)
		}
		return n, nil
	}
	if room := c.max - c.buf.Len(); room < len(p) {
		p = p[:max(room, 0)]
	}
	c.buf.Write(p)
	return n, nil
}

func (c *cappedBuffer) Bytes() []byte  { return c.buf.Bytes() }
func (c *cappedBuffer) String() string { return c.buf.String() }
