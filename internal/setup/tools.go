package setup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/secexec/secexec/software"
)

// Tools is the directory of the node tools tree (software.NodeToolPins):
// usr/lib/node_modules/{npm,typescript,@types/node,undici-types}, which VMs see read-only at the
// same path. It is named after the pins, so a new pin gets a new tree.
func (d Dirs) Tools() string {
	h := sha256.New()
	for _, p := range software.NodeToolPins() {
		fmt.Fprintf(h, "%s\x00%s\n", p.Spec(), p.Integrity)
	}
	return filepath.Join(d.Cache, "tools", hex.EncodeToString(h.Sum(nil)[:8]))
}

// registryFile holds the registry URL the host's npm uses.
func (d Dirs) registryFile() string { return filepath.Join(d.Cache, "tools", "registry") }

// Registry returns the npm registry URL recorded at set-up (the host's
// `npm config get registry`), or "" when there is none. Guests' npm is
// pointed at it (npm_config_registry); secexec never names a registry.
func Registry(d Dirs) string {
	b, err := os.ReadFile(d.registryFile())
	if err != nil {
		return ""
	}
	return validRegistry(strings.TrimSpace(string(b)))
}

// validRegistry returns s if it is an http(s) URL with a host, else "".
func validRegistry(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(s) > 2048 {
		return ""
	}
	return s
}

// ensureTools fetches and unpacks the node tools into d.Tools() when they
// are missing, and records the host's registry when it is not recorded.
func ensureTools(ctx context.Context, opts Options, log *slog.Logger) error {
	d := opts.Dirs
	final := d.Tools()
	if _, err := os.Stat(final); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := buildTools(ctx, opts, final, log); err != nil {
			return err
		}
	}
	if _, err := os.Stat(d.registryFile()); errors.Is(err, fs.ErrNotExist) {
		reg, err := hostRegistry(ctx, opts.NPM)
		if err != nil {
			return err
		}
		log.Debug("setup: npm registry", "url", reg)
		if err := writeAtomic(d.registryFile(), []byte(reg+"\n")); err != nil {
			return err
		}
	}
	return nil
}

func buildTools(ctx context.Context, opts Options, final string, log *slog.Logger) error {
	parent := filepath.Dir(final)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	mods := filepath.Join(tmp, "usr", "lib", "node_modules")
	if err := os.MkdirAll(mods, 0o755); err != nil {
		return err
	}
	// The packages are fetched at once: each is an npm process that
	// mostly waits for the network.
	pins := software.NodeToolPins()
	errs := make([]error, len(pins))
	var wg sync.WaitGroup
	for i, pin := range pins {
		dst := filepath.Join(mods, filepath.FromSlash(pin.Package)) // @types/node nests
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			if errs[i] = software.FetchNodePackage(ctx, opts.NPM, pin, dst); errs[i] == nil {
				log.Debug("setup: node tool installed", "package", pin.Spec(), "took", time.Since(start))
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if opts.Progress != nil {
		specs := make([]string, len(pins))
		for i, p := range pins {
			specs[i] = p.Spec()
		}
		fmt.Fprintf(opts.Progress, "node tools: %s installed\n", strings.Join(specs, ", "))
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another process may have finished the same tree first.
		if _, serr := os.Stat(final); serr == nil {
			return nil
		}
		return err
	}
	return nil
}

// hostRegistry asks the host's npm which registry it uses.
func hostRegistry(ctx context.Context, npmExe string) (string, error) {
	if npmExe == "" {
		npmExe = "npm"
	}
	npm, err := exec.LookPath(npmExe)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "config", "get", "registry")
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("npm config get registry: %w", err)
	}
	reg := validRegistry(strings.TrimSpace(string(out)))
	if reg == "" {
		return "", fmt.Errorf("npm config get registry: %q is not an http(s) URL", strings.TrimSpace(string(out)))
	}
	return reg, nil
}

func writeAtomic(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}
