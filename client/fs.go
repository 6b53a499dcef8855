package client

import (
	"context"
	"fmt"
	"io"
	iofs "io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// FS is a VM's filesystem on the server. Paths are absolute guest paths.
type FS struct{ vm *VM }

// FileInfo is a file's attributes as the server reports them.
type FileInfo struct {
	Name string
	// Type is "file", "dir", "symlink" or "other".
	Type    string
	Mode    iofs.FileMode // permission bits
	Size    int64
	ModTime time.Time
	UID     uint32
	GID     uint32
}

// IsDir reports whether the file is a directory.
func (fi *FileInfo) IsDir() bool { return fi.Type == "dir" }

type statJSON struct {
	Name    string    `json:"name"`
	Type    string    `json:"type"`
	Mode    uint32    `json:"mode"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	UID     uint32    `json:"uid"`
	GID     uint32    `json:"gid"`
}

func (j *statJSON) info() *FileInfo {
	return &FileInfo{Name: j.Name, Type: j.Type, Mode: iofs.FileMode(j.Mode).Perm(), Size: j.Size,
		ModTime: j.ModTime, UID: j.UID, GID: j.GID}
}

// filePath is the escaped route of guest path name. The escaping is
// Go's canonical one, which the server's router decodes.
func (f *FS) filePath(name string) (string, error) {
	if !path.IsAbs(name) || strings.ContainsRune(name, 0) {
		return "", &iofs.PathError{Op: "client", Path: name, Err: fmt.Errorf("%w: want an absolute guest path", iofs.ErrInvalid)}
	}
	return f.vm.path("/files") + (&url.URL{Path: path.Clean(name)}).EscapedPath(), nil
}

// Open streams the regular file name; close the reader.
func (f *FS) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	p, err := f.filePath(name)
	if err != nil {
		return nil, err
	}
	resp, err := f.vm.c.send(ctx, &call{method: "GET", path: p})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// ReadFile returns the contents of the regular file name (the server
// refuses files over its file limit with ErrTooLarge).
func (f *FS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	rc, err := f.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("client: reading %s: %w", name, ctxErr(ctx, err))
	}
	return data, nil
}

// WriteFile writes data to name, creating it and missing parent
// directories (mode 0644, directories 0755); the file changes only once
// all of it arrived.
func (f *FS) WriteFile(ctx context.Context, name string, data []byte) error {
	p, err := f.filePath(name)
	if err != nil {
		return err
	}
	if data == nil {
		data = []byte{}
	}
	return f.vm.c.doJSON(ctx, &call{method: "PUT", path: p, body: data, contentType: "application/octet-stream"}, nil)
}

// WriteFrom writes what r yields to name, as WriteFile, streaming it.
// The request is not retried (r cannot be read twice).
func (f *FS) WriteFrom(ctx context.Context, name string, r io.Reader) error {
	p, err := f.filePath(name)
	if err != nil {
		return err
	}
	return f.drain(f.vm.c.send(ctx, &call{method: "PUT", path: p, stream: r, contentType: "application/octet-stream"}))
}

// Lstat returns name's attributes, not following a final symlink.
func (f *FS) Lstat(ctx context.Context, name string) (*FileInfo, error) {
	p, err := f.filePath(name)
	if err != nil {
		return nil, err
	}
	var j statJSON
	if err := f.vm.c.doJSON(ctx, &call{method: "GET", path: p, query: url.Values{"stat": {""}}}, &j); err != nil {
		return nil, err
	}
	return j.info(), nil
}

// ReadDir lists the directory name.
func (f *FS) ReadDir(ctx context.Context, name string) ([]*FileInfo, error) {
	p, err := f.filePath(name)
	if err != nil {
		return nil, err
	}
	var j struct {
		Entries []statJSON `json:"entries"`
	}
	if err := f.vm.c.doJSON(ctx, &call{method: "GET", path: p, query: url.Values{"list": {""}}}, &j); err != nil {
		return nil, err
	}
	out := make([]*FileInfo, len(j.Entries))
	for i := range j.Entries {
		out[i] = j.Entries[i].info()
	}
	return out, nil
}

// MkdirAll creates the directory name and its missing parents.
func (f *FS) MkdirAll(ctx context.Context, name string) error {
	p, err := f.filePath(name)
	if err != nil {
		return err
	}
	return f.vm.c.doJSON(ctx, &call{method: "PUT", path: p, query: url.Values{"mkdir": {""}}}, nil)
}

// Remove removes the file or empty directory name.
func (f *FS) Remove(ctx context.Context, name string) error {
	p, err := f.filePath(name)
	if err != nil {
		return err
	}
	return f.vm.c.doJSON(ctx, &call{method: "DELETE", path: p}, nil)
}

// RemoveAll removes name and everything beneath it; name must exist.
func (f *FS) RemoveAll(ctx context.Context, name string) error {
	p, err := f.filePath(name)
	if err != nil {
		return err
	}
	return f.vm.c.doJSON(ctx, &call{method: "DELETE", path: p, query: url.Values{"recursive": {""}}}, nil)
}

// ReadArchive streams a tar of the directory dir (names relative to
// it); close the reader.
func (f *FS) ReadArchive(ctx context.Context, dir string) (io.ReadCloser, error) {
	if _, err := f.filePath(dir); err != nil {
		return nil, err
	}
	resp, err := f.vm.c.send(ctx, &call{method: "GET", path: f.vm.path("/archive"), query: url.Values{"path": {dir}}})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// WriteArchive unpacks the tar r into the directory dir, creating it.
// Names that would leave dir are refused (ErrBadArchive).
func (f *FS) WriteArchive(ctx context.Context, dir string, r io.Reader) error {
	if _, err := f.filePath(dir); err != nil {
		return err
	}
	return f.drain(f.vm.c.send(ctx, &call{method: "PUT", path: f.vm.path("/archive"), query: url.Values{"path": {dir}},
		stream: r, contentType: "application/x-tar"}))
}

// drain finishes a call whose answer has no body worth reading, so that
// its connection can be reused.
func (f *FS) drain(resp *http.Response, err error) error {
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	return resp.Body.Close()
}
