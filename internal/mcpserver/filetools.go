package mcpserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	iofs "io/fs"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/policy"
)

type fileReadIn struct {
	VMID     string `json:"vm_id" jsonschema:"the id vm_create returned"`
	Path     string `json:"path" jsonschema:"guest path, absolute or relative to the VM's working directory"`
	Offset   int64  `json:"offset,omitempty" jsonschema:"byte offset to start at"`
	Length   int    `json:"length,omitempty" jsonschema:"bytes to read at most (default and maximum set by the server)"`
	Encoding string `json:"encoding,omitempty" jsonschema:"text, base64, or auto (the default: text if the bytes are valid UTF-8, else base64)"`
}

type fileReadOut struct {
	Path      string `json:"path"`
	Size      int64  `json:"size" jsonschema:"the whole file's size"`
	Offset    int64  `json:"offset"`
	Content   string `json:"content"`
	Encoding  string `json:"encoding" jsonschema:"text or base64"`
	Truncated bool   `json:"truncated,omitempty" jsonschema:"the file goes on beyond what was returned; read again from offset+length"`
}

type fileWriteIn struct {
	VMID     string `json:"vm_id" jsonschema:"the id vm_create returned"`
	Path     string `json:"path" jsonschema:"guest path, absolute or relative to the VM's working directory"`
	Content  string `json:"content" jsonschema:"the file's new content"`
	Encoding string `json:"encoding,omitempty" jsonschema:"text (the default) or base64"`
	Mkdirs   bool   `json:"mkdirs,omitempty" jsonschema:"create missing parent directories"`
}

type fileWriteOut struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
}

type fileListIn struct {
	VMID string `json:"vm_id" jsonschema:"the id vm_create returned"`
	Path string `json:"path,omitempty" jsonschema:"guest directory (default the VM's working directory)"`
}

type fileEntry struct {
	Name string `json:"name"`
	Type string `json:"type" jsonschema:"file, dir, symlink or other"`
	Size int64  `json:"size"`
}

type fileListOut struct {
	Path      string      `json:"path"`
	Entries   []fileEntry `json:"entries"`
	Truncated bool        `json:"truncated,omitempty" jsonschema:"the directory has more entries than the server lists"`
}

// guestPath checks a path a client named and returns it absolute (from
// the VM's working directory) for the tools' answers. The operation
// itself is given the path as named, for the kernel to resolve.
func (e *vmEntry) guestPath(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%w: path is empty", ErrBadArgument)
	}
	if strings.ContainsRune(name, 0) || len(name) > policy.MaxPathLen {
		return "", fmt.Errorf("%w: path %q: %w", ErrBadArgument, printable(name), errno.EINVAL)
	}
	if !path.IsAbs(name) {
		return path.Join(e.cwd, name), nil
	}
	return path.Clean(name), nil
}

// files returns the VM's filesystem as its guest user sees it. The file
// tools act for a client no more trusted than the VM's programs, so they
// go through the kernel as a guest process's system calls do: each path
// is resolved, checked against the VM's policy and file modes, and acted
// on in one walk, and a symlink the guest swaps meanwhile cannot lead
// them anywhere the guest may not go.
func (e *vmEntry) files() *secexec.FS { return e.vm.FS().AsGuest() }

func (s *Server) fileRead(ctx context.Context, req *mcp.CallToolRequest, in fileReadIn) (*mcp.CallToolResult, fileReadOut, error) {
	var out fileReadOut
	switch in.Encoding {
	case "", "auto", "text", "base64":
	default:
		return nil, out, fmt.Errorf("%w: encoding %q: want text, base64 or auto", ErrBadArgument, printable(in.Encoding))
	}
	if in.Offset < 0 || in.Length < 0 {
		return nil, out, fmt.Errorf("%w: offset and length may not be negative", ErrBadArgument)
	}
	length := in.Length
	if length == 0 {
		length = s.cfg.MaxFileBytes
	}
	if length > s.cfg.MaxFileBytes {
		return nil, out, fmt.Errorf("length %d: %w of %d (read in pieces with offset)", length, ErrWiderThanServer, s.cfg.MaxFileBytes)
	}
	e, release, err := s.acquire(req.Session, in.VMID)
	if err != nil {
		return nil, out, err
	}
	defer release()
	p, err := e.guestPath(in.Path)
	if err != nil {
		return nil, out, err
	}
	fs := e.files()
	fi, err := fs.Stat(ctx, in.Path)
	if err != nil {
		return nil, out, err
	}
	if fi.IsDir() {
		return nil, out, fmt.Errorf("%s: %w (list it with file_list)", printable(in.Path), errno.EISDIR)
	}
	// Read what the stat found there, at most length: buffers the size
	// of the answer, not of the largest answer allowed. The first read
	// happens even for nothing, so the kernel refuses what is not a
	// regular file (a device such as /dev/zero says size 0).
	want := int(min(int64(length), max(fi.Size()-in.Offset, 0)))
	data := make([]byte, 0, want)
	off := in.Offset
	for {
		buf := make([]byte, min(want-len(data), secexec.MaxChunk))
		n, err := fs.ReadAt(ctx, in.Path, buf, off)
		data = append(data, buf[:n]...)
		off += int64(n)
		if err == io.EOF || err == nil && len(data) >= want {
			break
		}
		if err != nil {
			return nil, out, err
		}
	}
	out = fileReadOut{Path: p, Size: fi.Size(), Offset: in.Offset, Truncated: off < fi.Size()}
	if in.Encoding == "text" || (in.Encoding != "base64" && utf8.Valid(data)) {
		out.Content, out.Encoding = text(data), "text"
	} else {
		out.Content, out.Encoding = base64.StdEncoding.EncodeToString(data), "base64"
	}
	return nil, out, nil
}

func (s *Server) fileWrite(ctx context.Context, req *mcp.CallToolRequest, in fileWriteIn) (*mcp.CallToolResult, fileWriteOut, error) {
	var out fileWriteOut
	data := []byte(in.Content)
	switch in.Encoding {
	case "", "text":
	case "base64":
		if n := base64.StdEncoding.DecodedLen(len(in.Content)); n > s.cfg.MaxFileBytes+2 {
			// Refused before decoding: no second copy of an oversize payload.
			return nil, out, &secexec.TooLargeError{What: "file", Size: int64(n), Limit: int64(s.cfg.MaxFileBytes)}
		}
		var err error
		if data, err = base64.StdEncoding.DecodeString(in.Content); err != nil {
			return nil, out, fmt.Errorf("%w: content is not base64: %w", ErrBadArgument, err)
		}
	default:
		return nil, out, fmt.Errorf("%w: encoding %q: want text or base64", ErrBadArgument, printable(in.Encoding))
	}
	if len(data) > s.cfg.MaxFileBytes {
		return nil, out, &secexec.TooLargeError{What: "file", Size: int64(len(data)), Limit: int64(s.cfg.MaxFileBytes)}
	}
	e, release, err := s.acquire(req.Session, in.VMID)
	if err != nil {
		return nil, out, err
	}
	defer release()
	p, err := e.guestPath(in.Path)
	if err != nil {
		return nil, out, err
	}
	fs := e.files()
	if in.Mkdirs {
		if err := fs.MkdirAll(ctx, path.Dir(p), 0o755); err != nil {
			return nil, out, err
		}
	}
	if err := fs.WriteFile(ctx, in.Path, data, 0o644); err != nil {
		return nil, out, err
	}
	return nil, fileWriteOut{Path: p, Bytes: len(data)}, nil
}

func (s *Server) fileList(ctx context.Context, req *mcp.CallToolRequest, in fileListIn) (*mcp.CallToolResult, fileListOut, error) {
	var out fileListOut
	e, release, err := s.acquire(req.Session, in.VMID)
	if err != nil {
		return nil, out, err
	}
	defer release()
	name := in.Path
	if name == "" {
		name = e.cwd
	}
	p, err := e.guestPath(name)
	if err != nil {
		return nil, out, err
	}
	ents, err := e.files().ReadDir(ctx, name)
	if err != nil {
		return nil, out, err
	}
	out = fileListOut{Path: p, Entries: []fileEntry{}}
	if len(ents) > s.cfg.MaxListEntries {
		ents, out.Truncated = ents[:s.cfg.MaxListEntries], true
	}
	for _, d := range ents {
		fe := fileEntry{Name: d.Name(), Type: "other"}
		switch t := d.Type(); {
		case t.IsRegular():
			fe.Type = "file"
		case t.IsDir():
			fe.Type = "dir"
		case t&iofs.ModeSymlink != 0:
			fe.Type = "symlink"
		}
		// An entry removed since the listing keeps size 0.
		if fi, err := d.Info(); err == nil {
			fe.Size = fi.Size()
		}
		out.Entries = append(out.Entries, fe)
	}
	return nil, out, nil
}
