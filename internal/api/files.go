package api

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/secexec/secexec"
)

// MaxArchiveEntries bounds the entries of a tar archive, either way.
const MaxArchiveEntries = 10000

// guestPath returns the absolute guest path of a /files/{path} route.
func guestPath(r *http.Request) (string, error) {
	p := "/" + chi.URLParam(r, "*")
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
	defer e.use()()
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
		if fi.Size() > s.cfg.MaxFileBytes {
			writeError(w, apiError(http.StatusRequestEntityTooLarge, CodeTooLarge, "the file has %d bytes; the limit is %d", fi.Size(), s.cfg.MaxFileBytes))
			return
		}
		data, err := fsys.ReadFile(ctx, p)
		if err != nil {
			writeError(w, err)
			return
		}
		if int64(len(data)) > s.cfg.MaxFileBytes { // grew since the stat
			writeError(w, apiError(http.StatusRequestEntityTooLarge, CodeTooLarge, "the file is over the limit of %d bytes", s.cfg.MaxFileBytes))
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		_, _ = w.Write(data)
	}
}

// putFile writes the body to the file, creating missing parent
// directories; ?mkdir creates a directory instead.
func (s *Server) putFile(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	defer e.use()()
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
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxFileBytes))
	if err != nil {
		writeError(w, err)
		return
	}
	if err := fsys.MkdirAll(ctx, path.Dir(p), 0o755); err != nil {
		writeError(w, err)
		return
	}
	if err := fsys.WriteFile(ctx, p, data, 0o644); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// deleteFile removes a file or empty directory; ?recursive removes a
// tree.
func (s *Server) deleteFile(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	defer e.use()()
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
	defer e.use()()
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
	for _, te := range ents {
		h := &tar.Header{Name: te.rel, Mode: int64(te.fi.Mode().Perm()), ModTime: te.fi.ModTime(), Format: tar.FormatPAX}
		var data []byte
		switch typeName(te.fi.Mode()) {
		case "dir":
			h.Typeflag, h.Name = tar.TypeDir, te.rel+"/"
		case "symlink":
			h.Typeflag, h.Linkname = tar.TypeSymlink, te.link
		default:
			if data, err = fsys.ReadFile(ctx, path.Join(dir, te.rel)); err != nil {
				s.cfg.Logger.Warn("archive: file vanished", "err", err)
				return // the client sees a truncated tar, not a false one
			}
			h.Typeflag, h.Size = tar.TypeReg, int64(len(data))
		}
		if tw.WriteHeader(h) != nil {
			return
		}
		if _, err := tw.Write(data); err != nil {
			return
		}
	}
	_ = tw.Close()
}

// ErrBadArchive is matched by the errors of archives that are refused.
var ErrBadArchive = errors.New("api: bad archive")

// archiveName checks a tar entry name and returns it cleaned, relative.
// Absolute names, names with .. components or NUL, and empty names are
// refused: an upload cannot write outside its directory.
func archiveName(name string) (string, error) {
	if name == "" || strings.ContainsRune(name, 0) || strings.HasPrefix(name, "/") || len(name) > 4096 {
		return "", fmt.Errorf("%w: entry name %q", ErrBadArchive, name)
	}
	for _, c := range strings.Split(name, "/") {
		if c == ".." {
			return "", fmt.Errorf("%w: entry name %q leaves the directory", ErrBadArchive, name)
		}
	}
	clean := path.Clean(name)
	if clean == "." {
		return "", nil
	}
	return clean, nil
}

// putArchive unpacks the tar body into the directory ?path= (created if
// missing). Regular files, directories and symlinks are accepted;
// symlinks are made last, so no entry of the archive is written through
// a link the archive made. Other entry types are refused.
func (s *Server) putArchive(w http.ResponseWriter, r *http.Request) {
	e := vmOf(r)
	defer e.use()()
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
	tr := tar.NewReader(http.MaxBytesReader(w, r.Body, s.cfg.MaxFileBytes))
	type link struct{ name, target string }
	var links []link
	n := 0
	bad := func(err error) {
		writeError(w, &Error{Status: http.StatusBadRequest, Code: CodeBadArchive, Message: err.Error(), Err: err})
	}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var mb *http.MaxBytesError
			if errors.As(err, &mb) {
				writeError(w, err)
				return
			}
			bad(fmt.Errorf("%w: %v", ErrBadArchive, err))
			return
		}
		if n++; n > MaxArchiveEntries {
			writeError(w, apiError(http.StatusRequestEntityTooLarge, CodeTooLarge, "more than %d entries", MaxArchiveEntries))
			return
		}
		rel, err := archiveName(h.Name)
		if err != nil {
			bad(err)
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
			var buf bytes.Buffer
			if _, err = io.Copy(&buf, tr); err != nil {
				var mb *http.MaxBytesError
				if errors.As(err, &mb) {
					writeError(w, err)
					return
				}
				bad(fmt.Errorf("%w: %v", ErrBadArchive, err))
				return
			}
			if err = fsys.MkdirAll(ctx, path.Dir(target), 0o755); err == nil {
				err = fsys.WriteFile(ctx, target, buf.Bytes(), mode)
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
