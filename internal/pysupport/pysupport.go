// Package pysupport provides the guest-side support files of the python3
// command (CPython for WASI, software.PythonPin): a read-only layer that
// puts them at software.PythonSupportDir, which the command's processes
// find on PYTHONPATH.
//
// sitecustomize.py adapts CPython to the VM at start-up: it moves to the
// working directory the kernel passes in PWD (wasi-libc starts at "/"),
// adds the VM's site directories for pure-Python packages
// (/usr/lib/python3/dist-packages and the user's site-packages), and runs
// a script named by a relative path, which CPython would otherwise look
// for under "/".
package pysupport

import (
	"context"
	_ "embed"
	"path"
	"strings"
	"time"

	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
	"github.com/secexec/secexec/software"
)

//go:embed sitecustomize.py
var siteCustomize []byte

// Files returns the support files by guest path.
func Files() map[string][]byte {
	return map[string][]byte{path.Join(software.PythonSupportDir, "sitecustomize.py"): siteCustomize}
}

// Layer returns a read-only filesystem (to be used as a lower layer of
// VMs' roots) holding the support files.
func Layer(ctx context.Context) (vfs.FileSystem, error) {
	epoch := time.Unix(0, 0).UTC()
	fs := memfs.New(memfs.Options{Now: func() time.Time { return epoch }})
	v, err := vfs.New(ctx, fs, vfs.Options{})
	if err != nil {
		return nil, err
	}
	c := &vfs.Caller{Cwd: "/"}
	dir := ""
	for _, elem := range strings.Split(strings.TrimPrefix(software.PythonSupportDir, "/"), "/") {
		dir += "/" + elem
		if err := v.Mkdir(ctx, c, dir, 0o755); err != nil {
			return nil, err
		}
	}
	for name, data := range Files() {
		f, err := v.Open(ctx, c, name, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, 0o644)
		if err != nil {
			return nil, err
		}
		_, err = f.Write(ctx, data)
		f.DecRef()
		if err != nil {
			return nil, err
		}
	}
	return fs, nil
}
