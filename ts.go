package secexec

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/secexec/secexec/internal/textfmt"
	"github.com/secexec/secexec/internal/tscheck"
	"github.com/secexec/secexec/kernel/errno"
)

// TS type-checks TypeScript in a VM with the pinned typescript package
// (the `tsc` of the VM): the compiler runs on the VM's node, under its
// permissions and limits, never on the host.
type TS struct {
	vm *VM
}

// TS returns the VM's TypeScript API.
func (v *VM) TS() *TS { return &TS{vm: v} }

// Diagnostic is one TypeScript compiler message: File (a path in the VM,
// or the name given to Check), 1-based Line and Column (0 without a
// position), Code (2322 for TS2322), Category ("error", "warning",
// "suggestion", "message") and Message. String formats it as tsc does.
type Diagnostic = tscheck.Diagnostic

// ErrCheck is matched by the error of a check that could not run (the
// checker failed, rather than reporting diagnostics).
var ErrCheck = errors.New("secexec: TypeScript check failed to run")

// tsExtensions are the files Check hands to the compiler as roots; the
// others (JSON, JavaScript, declarations imported by them) are there to
// be imported.
var tsExtensions = []string{".ts", ".tsx", ".mts", ".cts"}

// Check type-checks files, given by relative name ("src/a.ts") and
// content, as one program: it writes them to a scratch directory of the
// VM, compiles every .ts/.tsx/.mts/.cts among them, and removes the
// directory. A "tsconfig.json" among them gives the options and the file
// list; without one the options are strict, ES2022, bundler module
// resolution, with node's types. Diagnostics in the given files name
// them as given. It runs under the VM's permissions: /tmp must be
// writable and the VM's memory limit must fit the compiler (about 100 MiB
// of heap for a small program).
func (t *TS) Check(ctx context.Context, files map[string][]byte) ([]Diagnostic, error) {
	var roots []string
	for name := range files {
		if err := checkName(name); err != nil {
			return nil, err
		}
		if hasTSExt(name) {
			roots = append(roots, name)
		}
	}
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	dir := "/tmp/.secexec-tscheck-" + hex.EncodeToString(tok[:])
	fs := t.vm.FS()
	defer func() { _ = fs.RemoveAll(context.WithoutCancel(ctx), dir) }()
	for name, data := range files {
		p := dir + "/" + name
		if err := fs.MkdirAll(ctx, path.Dir(p), 0o755); err != nil {
			return nil, fmt.Errorf("secexec: TS check: %w", err)
		}
		if err := fs.WriteFile(ctx, p, data, 0o644); err != nil {
			return nil, fmt.Errorf("secexec: TS check: %w", err)
		}
	}
	diags, err := t.run(ctx, append([]string{"dir", dir}, roots...))
	for i := range diags {
		if rel, ok := strings.CutPrefix(diags[i].File, dir+"/"); ok {
			diags[i].File = rel
		}
	}
	return diags, err
}

// CheckFiles type-checks files already in the VM, by path (relative to
// the VM's working directory, or absolute), as one program. The nearest
// tsconfig.json above the first gives the options; without one, Check's
// defaults apply.
func (t *TS) CheckFiles(ctx context.Context, paths ...string) ([]Diagnostic, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("secexec: TS check: no files: %w", errno.EINVAL)
	}
	for _, p := range paths {
		if p == "" || strings.IndexByte(p, 0) >= 0 {
			return nil, fmt.Errorf("secexec: TS check: path %q: %w", p, errno.EINVAL)
		}
	}
	return t.run(ctx, append([]string{"files", "."}, paths...))
}

func (t *TS) run(ctx context.Context, args []string) ([]Diagnostic, error) {
	argv := append([]string{"node", "-e", tscheck.Script, "--"}, args...)
	res, err := t.vm.Run(ctx, argv, &ExecOptions{MaxOutput: tscheck.MaxReport + 1})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 || res.Truncated {
		return nil, fmt.Errorf("%w: exit %d: %s", ErrCheck, res.ExitCode, textfmt.LastLines(string(res.Stderr), 5))
	}
	rep, err := tscheck.Parse(res.Stdout)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCheck, err)
	}
	return rep.Diagnostics, nil
}

// checkName accepts a clean relative name that stays inside the scratch
// directory.
func checkName(name string) error {
	if name == "" || len(name) > 1024 || path.IsAbs(name) || path.Clean(name) != name ||
		name == ".." || strings.HasPrefix(name, "../") || strings.ContainsAny(name, "\x00\\") {
		return fmt.Errorf("secexec: TS check: file name %q: want a clean relative path: %w", name, errno.EINVAL)
	}
	return nil
}

func hasTSExt(name string) bool {
	for _, ext := range tsExtensions {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}
