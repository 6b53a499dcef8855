package api

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/secexec/secexec"
	"github.com/secexec/secexec/internal/tarsafe"
	"github.com/secexec/secexec/kernel/errno"
)

// MaxArchiveEntries bounds the entries of a tar archive, either way.
const MaxArchiveEntries = 10000

// guestPath returns the absolute guest path of a /files/{path} route.
// A client generated from the OpenAPI document percent-encodes {path}
// as one segment (workspace%2Fa.txt); chi then matches the encoded path
// and hands it over still encoded, so it is decoded here: "/" inside a
// guest file name is impossible, so %2F can only mean a separator.
func guestPath(r *http.Request) (string, error) {
	p := "/" + chi.URLParam(r, "*")
	if r.URL.RawPath != "" {
		dec, err := url.PathUnescape(p)
		if err != nil {
			return "", apiError(http.StatusBadRequest, CodeBadRequest, "the path is not valid percent-encoding: %v", err)
		}
		p = dec
	}
	if strings.ContainsRune(p, 0) {
		return "", apiError(http.StatusBadRequest, CodeBadRequest, "the path contains NUL")
	}
	return path.Clean(p), nil
}

// StatJSON is a file's attributes.
type StatJSON struct {
	Name    string    `json:"name"`
	Type    string    `json:"type"` // file, dir, symlink, other
	Mode    uint32    `json:"mode"` // permission bits
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	UID     uint32    `json:"uid"`
	GID     uint32    `json:"gid"`
}

func typeName(m iofs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&iofs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "other"
}

func statJSON(fi *secexec.FileInfo) StatJSON {
	st := fi.Stat()
	return StatJSON{Name: fi.Name(), Type: typeName(fi.Mode()), Mode: uint32(fi.Mode().Perm()), Size: fi.Size(),
		ModTime: fi.ModTime().UTC(), UID: st.UID, GID: st.GID}
}

// changedPath returns the guest path of a route that changes it; / is
// refused, answering the request.
func changedPath(w http.ResponseWriter, r *http.Request, verb string) (string, bool) {
	p, err := guestPath(r)
	if err == nil && p == "/" {
		err = apiError(http.StatusBadRequest, CodeBadRequest, "cannot %s /", verb)
	}
	if err != nil {
		writeError(w, err)
		return "", false
	}
	return p, true
}

// getFile answers the file's bytes, or with ?stat its attributes, or
// with ?list a directory's entries.
func (s *Server) getFile(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	end, ok := s.start(w, e)
	if !ok {
		return
	}
	defer end()
	p, err := guestPath(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, q := r.Context(), r.URL.Query()
	fsys := e.vm.FS()
	switch {
	case q.Has("stat"):
		fi, err := fsys.Lstat(ctx, p)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, statJSON(fi))
	case q.Has("list"):
		ents, err := fsys.ReadDir(ctx, p)
		if err != nil {
			writeError(w, err)
			return
		}
		out := make([]StatJSON, 0, len(ents))
		for _, d := range ents {
			info, err := d.Info()
			if err != nil {
				continue // removed meanwhile
			}
			fi := info.(*secexec.FileInfo)
			out = append(out, statJSON(fi))
		}
		writeJSON(w, http.StatusOK, map[string]any{"entries": out})
	default:
		fi, err := fsys.Stat(ctx, p)
		if err != nil {
			writeError(w, err)
			return
		}
		if fi.IsDir() {
			writeError(w, apiError(http.StatusBadRequest, CodeBadRequest, "%s is a directory (use ?list or /archive)", p))
			return
		}
		if !fi.Mode().IsRegular() {
			writeError(w, apiError(http.StatusBadRequest, CodeNotRegular, "%s is not a regular file (a device, FIFO or socket is never read)", p))
			return
		}
		if fi.Size() > s.cfg.MaxFileBytes {
			writeError(w, apiError(http.StatusRequestEntityTooLarge, CodeTooLarge, "the file has %d bytes; the limit is %d", fi.Size(), s.cfg.MaxFileBytes))
			return
		}
		s.sendFile(w, r, fsys, p, fi.Size())
	}
}

// fileChunk is the piece in which files are moved between a request or
// response and the VM: a file route holds one such buffer, never a file.
const fileChunk = 256 << 10

// sendFile streams the regular file p (size bytes by its stat) in
// chunks. A file that fits in the first chunk is answered with its
// length; a larger one with the stat's length, and only that many bytes
// are sent even if it grows meanwhile. A file larger than its stat said
// (procfs files have size 0) is sent until its end, up to MaxFileBytes:
// past that, or on a read error after the header went out, the
// connection is cut so the client sees a broken response, never a
// silently short one.
func (s *Server) sendFile(w http.ResponseWriter, r *http.Request, fsys *secexec.FS, p string, size int64) {
	ctx := r.Context()
	buf := make([]byte, fileChunk)
	n, err := fsys.ReadAt(ctx, p, buf, 0)
	if err != nil && err != io.EOF {
		writeError(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	if err == io.EOF {
		h.Set("Content-Length", fmt.Sprint(n))
		_, _ = w.Write(buf[:n])
		return
	}
	limit, exact := s.cfg.MaxFileBytes, false
	if size >= int64(n) {
		limit, exact = size, true
		h.Set("Content-Length", fmt.Sprint(size))
	}
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(buf[:n]); err != nil {
		return
	}
	off := int64(n)
	for off < limit {
		m, err := fsys.ReadAt(ctx, p, buf[:min(int64(len(buf)), limit-off)], off)
		if m > 0 {
			if _, werr := w.Write(buf[:m]); werr != nil {
				return
			}
			off += int64(m)
		}
		if err == io.EOF {
			return // shorter than its stat: the server closes the connection
		}
		if err != nil {
			s.cfg.Logger.Warn("file read failed mid-response", "vm", vmOf(r).id, "err", err)
			panic(http.ErrAbortHandler)
		}
	}
	if !exact { // still not at its end at the limit
		s.cfg.Logger.Warn("file over the limit mid-response", "vm", vmOf(r).id, "limit", limit)
		panic(http.ErrAbortHandler)
	}
}

// fill reads into buf until it is full or r fails; io.EOF means the end.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// receiveFile writes what r yields to a new file next to name, in chunks,
// and renames it over name only when all of it is written: a failed or
// cut upload leaves name as it was and no partial file behind.
func receiveFile(ctx context.Context, fsys *secexec.FS, name string, r io.Reader, perm iofs.FileMode) error {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(path.Dir(name), ".secexec-upload-"+hex.EncodeToString(rnd[:]))
	if err := fsys.WriteFile(ctx, tmp, nil, perm); err != nil {
		return err
	}
	err := func() error {
		buf := make([]byte, fileChunk)
		var off int64
		for {
			n, rerr := fill(r, buf)
			if n > 0 {
				if err := fsys.WriteAt(ctx, tmp, buf[:n], off); err != nil {
					return err
				}
				off += int64(n)
			}
			if rerr == io.EOF {
				return nil
			}
			if rerr != nil {
				return rerr
			}
		}
	}()
	if err == nil {
		err = fsys.Rename(ctx, tmp, name)
	}
	if err != nil {
		_ = fsys.Remove(context.WithoutCancel(ctx), tmp)
	}
	return err
}

// putFile writes the body to the file, creating missing parent
// directories; ?mkdir creates a directory instead.
func (s *Server) putFile(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	end, ok := s.start(w, e)
	if !ok {
		return
	}
	defer end()
	p, ok := changedPath(w, r, "write")
	if !ok {
		return
	}
	ctx, fsys := r.Context(), e.vm.FS()
	if r.URL.Query().Has("mkdir") {
		if err := fsys.MkdirAll(ctx, p, 0o755); err != nil {
			writeError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	bodyDeadline(w, uploadBodyTime)
	if err := fsys.MkdirAll(ctx, path.Dir(p), 0o755); err != nil {
		writeError(w, err)
		return
	}
	if err := receiveFile(ctx, fsys, p, http.MaxBytesReader(w, r.Body, s.cfg.MaxFileBytes), 0o644); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// deleteFile removes a file or empty directory; ?recursive removes a
// tree.
func (s *Server) deleteFile(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	end, ok := s.start(w, e)
	if !ok {
		return
	}
	defer end()
	p, ok := changedPath(w, r, "remove")
	if !ok {
		return
	}
	fsys := e.vm.FS()
	var err error
	if r.URL.Query().Has("recursive") {
		if _, err := fsys.Lstat(r.Context(), p); err != nil { // RemoveAll of nothing succeeds
			writeError(w, err)
			return
		}
		err = fsys.RemoveAll(r.Context(), p)
	} else {
		err = fsys.Remove(r.Context(), p)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func archiveDir(r *http.Request) (string, error) {
	p := r.URL.Query().Get("path")
	if p == "" || !path.IsAbs(p) || strings.ContainsRune(p, 0) {
		return "", apiError(http.StatusBadRequest, CodeBadRequest, "?path= must be an absolute guest path")
	}
	return path.Clean(p), nil
}

// tarEntry is one file of a directory being archived.
type tarEntry struct {
	rel  string
	fi   *secexec.FileInfo
	link string
}

// getArchive answers a tar of the directory ?path= (regular files,
// directories and symlinks; names relative to it). The tree is walked
// first, so an archive over the size limit is refused before a byte is
// sent.
func (s *Server) getArchive(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	end, ok := s.start(w, e)
	if !ok {
		return
	}
	defer end()
	dir, err := archiveDir(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, fsys := r.Context(), e.vm.FS()
	fi, err := fsys.Stat(ctx, dir)
	if err != nil {
		writeError(w, err)
		return
	}
	if !fi.IsDir() {
		writeError(w, apiError(http.StatusBadRequest, CodeBadRequest, "%s is not a directory", dir))
		return
	}
	var ents []tarEntry
	var total int64
	var walk func(rel string) error
	walk = func(rel string) error {
		ds, err := fsys.ReadDir(ctx, path.Join(dir, rel))
		if err != nil {
			return err
		}
		for _, d := range ds {
			info, err := d.Info()
			if err != nil {
				continue
			}
			fi := info.(*secexec.FileInfo)
			te := tarEntry{rel: path.Join(rel, d.Name()), fi: fi}
			if len(ents) >= MaxArchiveEntries {
				return apiError(http.StatusRequestEntityTooLarge, CodeTooLarge, "more than %d entries", MaxArchiveEntries)
			}
			switch typeName(fi.Mode()) {
			case "symlink":
				if te.link, err = fsys.Readlink(ctx, path.Join(dir, te.rel)); err != nil {
					return err
				}
			case "file":
				total += fi.Size() + 512
			case "dir":
			default:
				continue // devices, fifos, sockets: not archived
			}
			total += 512
			if total > s.cfg.MaxFileBytes {
				return apiError(http.StatusRequestEntityTooLarge, CodeTooLarge, "the archive would be over %d bytes", s.cfg.MaxFileBytes)
			}
			ents = append(ents, te)
			if fi.IsDir() {
				if err := walk(te.rel); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(""); err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-tar")
	tw := tar.NewWriter(w)
	buf := make([]byte, fileChunk)
	for _, te := range ents {
		h := &tar.Header{Name: te.rel, Mode: int64(te.fi.Mode().Perm()), ModTime: te.fi.ModTime(), Format: tar.FormatPAX}
		file := typeName(te.fi.Mode()) == "file"
		switch typeName(te.fi.Mode()) {
		case "dir":
			h.Typeflag, h.Name = tar.TypeDir, te.rel+"/"
		case "symlink":
			h.Typeflag, h.Linkname = tar.TypeSymlink, te.link
		default:
			h.Typeflag, h.Size = tar.TypeReg, te.fi.Size()
		}
		if tw.WriteHeader(h) != nil {
			return
		}
		if !file {
			continue
		}
		// The file is streamed, exactly the size the walk saw; one that
		// shrank or went meanwhile cuts the tar, so the client sees a
		// truncated archive, not a false one.
		name := path.Join(dir, te.rel)
		for off := int64(0); off < h.Size; {
			n, err := fsys.ReadAt(ctx, name, buf[:min(int64(len(buf)), h.Size-off)], off)
			if n > 0 {
				if _, werr := tw.Write(buf[:n]); werr != nil {
					return
				}
				off += int64(n)
			}
			if off < h.Size && err != nil {
				s.cfg.Logger.Warn("archive: file changed while archived", "vm", e.id, "err", err)
				panic(http.ErrAbortHandler)
			}
		}
	}
	_ = tw.Close()
}

// ErrBadArchive is matched by the errors of archives that are refused.
var ErrBadArchive = errors.New("api: bad archive")

// putArchive unpacks the tar body into the directory ?path= (created if
// missing). Regular files, directories and symlinks are accepted;
// symlinks are made last, so no entry of the archive is written through
// a link the archive made. Other entry types, sparse entries and names
// that leave the directory are refused (tarsafe). Each file is streamed
// into the VM in chunks, never held whole, and an entry whose declared
// size is more than the body may still carry is refused before a byte of
// it is read; the VM's storage limit stops a write at ENOSPC. An archive
// refused part-way leaves the entries before the bad one in place (each
// file whole: a file is written under a temporary name and renamed into
// place when complete) and nothing of the bad one.
func (s *Server) putArchive(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	end, ok := s.start(w, e)
	if !ok {
		return
	}
	defer end()
	dir, err := archiveDir(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, fsys := r.Context(), e.vm.FS()
	if err := fsys.MkdirAll(ctx, dir, 0o755); err != nil {
		writeError(w, err)
		return
	}
	bodyDeadline(w, uploadBodyTime)
	body := &countingReader{r: http.MaxBytesReader(w, r.Body, s.cfg.MaxFileBytes)}
	tr := tar.NewReader(body)
	type link struct{ name, target string }
	var links []link
	n := 0
	bad := func(err error) {
		writeError(w, &Error{Status: http.StatusBadRequest, Code: CodeBadArchive, Message: err.Error(), Err: err})
	}
	readErr := func(err error) {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			writeError(w, err)
			return
		}
		var ae *Error
		if errors.As(err, &ae) || isGuestErr(err) {
			writeError(w, err)
			return
		}
		bad(fmt.Errorf("%w: %v", ErrBadArchive, err))
	}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			readErr(err)
			return
		}
		if n++; n > MaxArchiveEntries {
			writeError(w, apiError(http.StatusRequestEntityTooLarge, CodeTooLarge, "more than %d entries", MaxArchiveEntries))
			return
		}
		rel, err := tarsafe.Check(h)
		if err != nil {
			bad(fmt.Errorf("%w: %w", ErrBadArchive, err))
			return
		}
		target := path.Join(dir, rel)
		mode := iofs.FileMode(h.Mode).Perm()
		switch h.Typeflag {
		case tar.TypeDir:
			err = fsys.MkdirAll(ctx, target, mode|0o700)
		case tar.TypeReg:
			if rel == "" {
				bad(fmt.Errorf("%w: a file entry names the directory itself", ErrBadArchive))
				return
			}
			// Refused before reading: the body cannot carry more.
			if left := s.cfg.MaxFileBytes - body.n; h.Size > left {
				writeError(w, apiError(http.StatusRequestEntityTooLarge, CodeTooLarge, "entry %q declares %d bytes; at most %d more fit in the %d-byte limit", rel, h.Size, left, s.cfg.MaxFileBytes))
				return
			}
			if err = fsys.MkdirAll(ctx, path.Dir(target), 0o755); err == nil {
				err = receiveFile(ctx, fsys, target, tr, mode)
			}
			if err != nil {
				readErr(err)
				return
			}
		case tar.TypeSymlink:
			if rel == "" || h.Linkname == "" || strings.ContainsRune(h.Linkname, 0) {
				bad(fmt.Errorf("%w: bad symlink entry %q", ErrBadArchive, h.Name))
				return
			}
			links = append(links, link{target, h.Linkname})
		case tar.TypeXGlobalHeader:
		default:
			bad(fmt.Errorf("%w: entry %q has an unsupported type %q (regular files, directories and symlinks only)", ErrBadArchive, h.Name, h.Typeflag))
			return
		}
		if err != nil {
			writeError(w, err)
			return
		}
	}
	for _, l := range links {
		if err := fsys.MkdirAll(ctx, path.Dir(l.name), 0o755); err != nil {
			writeError(w, err)
			return
		}
		if err := fsys.Symlink(ctx, l.target, l.name); err != nil {
			writeError(w, err)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// isGuestErr reports whether err came from the VM (its filesystem, its
// limits, its state) rather than from reading the archive.
func isGuestErr(err error) bool {
	var en errno.Errno
	var tl *secexec.TooLargeError
	return errors.As(err, &en) || errors.As(err, &tl) || errors.Is(err, secexec.ErrClosed) ||
		errors.Is(err, secexec.ErrEngineLost) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
