package snapshot

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/secexec/secexec/kernel/errno"
	"github.com/secexec/secexec/kernel/vfs"
)

// Version is the manifest format this package writes and reads.
const Version = 1

// Bounds on what a manifest may hold, so that a store that was tampered
// with cannot make a restore allocate without bound.
const (
	// MaxManifest is the most bytes a manifest may have.
	MaxManifest = 64 << 20
	// MaxEntries is the most entries all layers of a manifest may have.
	MaxEntries = 1 << 20
	// MaxLayers is the most layers a manifest may have.
	MaxLayers = 64
	// MaxMeta is the most bytes of metadata a manifest may carry.
	MaxMeta = 1 << 20
)

// Entry is one object of a layer.
type Entry struct {
	// Path is slash-separated and relative to the layer's root; the root
	// itself is ".". Parents come before their children.
	Path string `json:"p"`
	// Mode is the type and permission bits.
	Mode uint32 `json:"m"`
	UID  uint32 `json:"u,omitempty"`
	GID  uint32 `json:"g,omitempty"`
	// Mtime is the modification time in Unix nanoseconds.
	Mtime int64 `json:"t,omitempty"`
	// Size and Blob (the hex SHA-256 of the data) of a regular file; an
	// empty file has no blob.
	Size int64  `json:"s,omitempty"`
	Blob string `json:"b,omitempty"`
	// Target of a symlink.
	Target string `json:"l,omitempty"`
	// Link is the Path of an earlier entry this one is a hard link to;
	// nothing else of the entry is used.
	Link string `json:"h,omitempty"`
	// Rdev of a device node.
	Rdev uint64 `json:"r,omitempty"`
}

// Layer is one writable filesystem of the VM, by where it is mounted:
// "/" is the root overlay's upper layer (whiteouts included, as the
// overlay keeps them), others are memory mounts such as /tmp.
type Layer struct {
	Mount   string  `json:"mount"`
	Entries []Entry `json:"entries"`
}

// Manifest describes one snapshot.
type Manifest struct {
	Version int `json:"version"`
	// ID is the manifest's name in its store: the first 16 bytes of the
	// SHA-256 of its encoding, in hex. It is not part of the encoding.
	ID      string    `json:"-"`
	Created time.Time `json:"created"`
	// Base is the fingerprint of the read-only layers the upper layer was
	// taken over; a restore over other layers is refused.
	Base   string  `json:"base"`
	Layers []Layer `json:"layers"`
	// Meta is the embedder's: package secexec keeps the VM's options
	// there.
	Meta json.RawMessage `json:"meta,omitempty"`
	// Files and Bytes count the regular files and their bytes.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// Stored is what this snapshot added to its store (compressed bytes
	// of blobs no earlier snapshot had).
	Stored int64 `json:"stored"`
}

// Summary is what a manifest says about a snapshot, without its entries.
type Summary struct {
	ID      string          `json:"id"`
	Created time.Time       `json:"created"`
	Base    string          `json:"base"`
	Meta    json.RawMessage `json:"meta,omitempty"`
	Files   int             `json:"files"`
	Bytes   int64           `json:"bytes"`
	Stored  int64           `json:"stored"`
	// Mounts are where the layers are mounted, in order.
	Mounts []string `json:"mounts"`
}

// Summary returns the manifest's summary.
func (m *Manifest) Summary() Summary {
	s := Summary{ID: m.ID, Created: m.Created, Base: m.Base, Meta: m.Meta, Files: m.Files, Bytes: m.Bytes, Stored: m.Stored}
	for _, l := range m.Layers {
		s.Mounts = append(s.Mounts, l.Mount)
	}
	return s
}

// Source is a filesystem to capture and where it is mounted.
type Source struct {
	Mount string
	FS    vfs.FileSystem
}

// Capture writes the blobs of srcs that store does not have yet, then
// the manifest, and returns the manifest. A failure (or a crash) before
// the manifest is written leaves no snapshot, and never damages another.
// Guests may keep running: a file that changes while it is being stored
// makes Capture fail with EAGAIN rather than record a torn file.
func Capture(ctx context.Context, store Store, base string, meta json.RawMessage, srcs []Source) (*Manifest, error) {
	if len(meta) > MaxMeta {
		return nil, fmt.Errorf("snapshot: metadata of %d bytes over %d: %w", len(meta), MaxMeta, errno.EFBIG)
	}
	m := &Manifest{Version: Version, Created: time.Now().UTC(), Base: base, Meta: meta}
	c := &capturer{store: store, m: m, done: make(map[string]bool), sem: make(chan struct{}, putWorkers)}
	for _, s := range srcs {
		l, err := c.layer(ctx, s)
		if err != nil {
			c.wg.Wait()
			return nil, err
		}
		m.Layers = append(m.Layers, l)
	}
	// Every blob is stored before the manifest that names it.
	c.wg.Wait()
	if err := c.firstErr(); err != nil {
		return nil, err
	}
	m.Stored = c.stored.Load()
	data, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if len(data) > MaxManifest {
		return nil, fmt.Errorf("snapshot: manifest of %d bytes over %d: %w", len(data), MaxManifest, errno.EFBIG)
	}
	m.ID = idOf(data)
	if err := store.PutManifest(ctx, m.ID, data); err != nil {
		return nil, err
	}
	return m, nil
}

func idOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:idLen/2])
}

type capturer struct {
	store   Store
	m       *Manifest
	done    map[string]bool // blobs known to be stored, or being stored
	entries int
	buf     []byte

	// Small files are checked against the store, compressed and stored
	// by up to putWorkers goroutines at once: a store's cost per blob is
	// mostly waiting for the disk (fsync) or the network (S3), which
	// overlaps.
	sem    chan struct{}
	wg     sync.WaitGroup
	stored atomic.Int64
	errMu  sync.Mutex
	err    error
}

// putWorkers bounds the blobs being stored at once; smallBlob is the
// largest file stored in the background (held in memory meanwhile), so
// at most putWorkers*smallBlob bytes wait.
const (
	putWorkers = 8
	smallBlob  = 1 << 20
)

func (c *capturer) fail(err error) {
	c.errMu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.errMu.Unlock()
}

func (c *capturer) firstErr() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.err
}

// layer walks one filesystem depth first, parents before children.
func (c *capturer) layer(ctx context.Context, s Source) (Layer, error) {
	l := Layer{Mount: s.Mount}
	root, err := s.FS.Root(ctx)
	if err != nil {
		return l, fmt.Errorf("snapshot: %s: %w", s.Mount, err)
	}
	links := make(map[uint64]string)
	var walk func(n vfs.Inode, p string) error
	walk = func(n vfs.Inode, p string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if c.entries++; c.entries > MaxEntries {
			return fmt.Errorf("snapshot: more than %d files: %w", MaxEntries, errno.EFBIG)
		}
		st, err := n.Stat(ctx)
		if err != nil {
			return fmt.Errorf("snapshot: %s: %w", p, err)
		}
		if st.Type() != vfs.TypeDir && st.Nlink > 1 {
			if first, ok := links[st.Ino]; ok {
				l.Entries = append(l.Entries, Entry{Path: p, Link: first})
				return nil
			}
			links[st.Ino] = p
		}
		e := Entry{Path: p, Mode: st.Mode, UID: st.UID, GID: st.GID, Mtime: st.Mtime.UnixNano(), Rdev: st.Rdev}
		switch st.Type() {
		case vfs.TypeSymlink:
			if e.Target, err = n.Readlink(ctx); err != nil {
				return fmt.Errorf("snapshot: %s: %w", p, err)
			}
		case vfs.TypeRegular:
			if e.Size, e.Blob, err = c.file(ctx, n); err != nil {
				return fmt.Errorf("snapshot: %s: %w", p, err)
			}
			c.m.Files++
			c.m.Bytes += e.Size
		}
		l.Entries = append(l.Entries, e)
		if st.Type() != vfs.TypeDir {
			return nil
		}
		var cookie uint64
		for {
			ents, err := n.ReadDir(ctx, cookie, 256)
			if err != nil {
				return fmt.Errorf("snapshot: %s: %w", p, err)
			}
			if len(ents) == 0 {
				return nil
			}
			for _, d := range ents {
				cookie = d.Next
				if d.Name == "." || d.Name == ".." {
					continue
				}
				child, err := n.Lookup(ctx, d.Name)
				if errno.Of(err) == errno.ENOENT {
					continue // removed since it was listed
				}
				if err != nil {
					return fmt.Errorf("snapshot: %s: %w", p, err)
				}
				if err := walk(child, path.Join(p, d.Name)); err != nil {
					return err
				}
			}
		}
	}
	return l, walk(root, ".")
}

// chunk is how much of a file is read at once.
const chunk = 256 << 10

// file stores one file's data as a blob, unless the store has it.
func (c *capturer) file(ctx context.Context, n vfs.Inode) (int64, string, error) {
	h, err := n.Open(ctx, vfs.O_RDONLY)
	if err != nil {
		return 0, "", err
	}
	defer h.Close()
	if c.buf == nil {
		c.buf = make([]byte, chunk)
	}
	sum := sha256.New()
	size, err := readAll(ctx, h, c.buf, sum)
	if err != nil || size == 0 {
		return 0, "", err
	}
	blob := hex.EncodeToString(sum.Sum(nil))
	if c.done[blob] {
		return size, blob, nil
	}
	if size <= smallBlob {
		// Whether the store has it is asked in the background too: for
		// a remote store each question is a round trip, which overlap.
		if err := c.firstErr(); err != nil {
			return 0, "", err
		}
		data := make([]byte, size)
		n2, err := readAll(ctx, h, c.buf, &sliceWriter{b: data[:0]})
		if err != nil {
			return 0, "", err
		}
		c.done[blob] = true
		c.sem <- struct{}{}
		c.wg.Add(1)
		go func() {
			defer func() { <-c.sem; c.wg.Done() }()
			sum := sha256.Sum256(data)
			if n2 != size || hex.EncodeToString(sum[:]) != blob {
				c.fail(fmt.Errorf("snapshot: a file changed while it was stored: %w", errno.EAGAIN))
				return
			}
			if has, err := c.store.HasBlob(ctx, blob); err != nil || has {
				if err != nil {
					c.fail(err)
				}
				return
			}
			var z bytes.Buffer
			zw := gzipWriters.Get().(*gzip.Writer)
			zw.Reset(&z)
			_, _ = zw.Write(data)
			_ = zw.Close()
			gzipWriters.Put(zw)
			n := int64(z.Len())
			if err := c.store.PutBlob(ctx, blob, &z); err != nil {
				c.fail(err)
				return
			}
			c.stored.Add(n)
		}()
		return size, blob, nil
	}
	has, err := c.store.HasBlob(ctx, blob)
	if err != nil {
		return 0, "", err
	}
	if !has {
		// The second read streams through gzip into the store and is
		// hashed again: data that changed since the first read fails the
		// put, so a blob is never stored under another content's name.
		pr, pw := io.Pipe()
		var counted countWriter
		wrote := make(chan struct{})
		go func() {
			defer close(wrote)
			again := sha256.New()
			zw := gzipWriters.Get().(*gzip.Writer)
			defer gzipWriters.Put(zw)
			zw.Reset(io.MultiWriter(pw, &counted))
			buf := make([]byte, chunk)
			n2, err := readAll(ctx, h, buf, io.MultiWriter(again, zw))
			if err == nil {
				err = zw.Close()
			}
			if err == nil && (n2 != size || hex.EncodeToString(again.Sum(nil)) != blob) {
				err = fmt.Errorf("file changed while it was stored: %w", errno.EAGAIN)
			}
			pw.CloseWithError(err)
		}()
		err := c.store.PutBlob(ctx, blob, pr)
		pr.CloseWithError(errors.New("snapshot: put ended"))
		<-wrote
		if err != nil {
			return 0, "", err
		}
		c.stored.Add(counted.n)
	}
	c.done[blob] = true
	return size, blob, nil
}

// gzipWriters recycles compressors: each holds about a megabyte of
// state, which allocating per file would spend most of a snapshot's CPU
// clearing.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return zw
}}

// sliceWriter appends to b up to its capacity: a file that grew between
// the two reads is cut there, and its hash then differs.
type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	room := cap(w.b) - len(w.b)
	w.b = append(w.b, p[:min(len(p), room)]...)
	return len(p), nil
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// readAll reads h from offset 0 to its end into w.
func readAll(ctx context.Context, h vfs.Handle, buf []byte, w io.Writer) (int64, error) {
	var off int64
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		n, err := h.ReadAt(ctx, buf, off)
		if n > 0 {
			_, _ = w.Write(buf[:n])
			off += int64(n)
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		if n == 0 {
			return off, nil
		}
	}
}

// Load reads and checks manifest id from store.
func Load(ctx context.Context, store Store, id string) (*Manifest, error) {
	data, err := store.GetManifest(ctx, id)
	if err != nil {
		return nil, err
	}
	return Decode(id, data)
}

// Decode parses a manifest and checks it against its id and the bounds.
func Decode(id string, data []byte) (*Manifest, error) {
	if len(data) > MaxManifest {
		return nil, fmt.Errorf("snapshot %s: manifest over %d bytes: %w", id, MaxManifest, ErrCorrupt)
	}
	if idOf(data) != id {
		return nil, fmt.Errorf("snapshot %s: manifest: %w", id, ErrCorrupt)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("snapshot %s: manifest: %w: %w", id, ErrCorrupt, err)
	}
	if m.Version != Version {
		return nil, fmt.Errorf("snapshot %s: manifest version %d, this build reads %d: %w", id, m.Version, Version, ErrCorrupt)
	}
	m.ID = id
	if len(m.Layers) > MaxLayers {
		return nil, fmt.Errorf("snapshot %s: %d layers: %w", id, len(m.Layers), ErrCorrupt)
	}
	n := 0
	for _, l := range m.Layers {
		if n += len(l.Entries); n > MaxEntries {
			return nil, fmt.Errorf("snapshot %s: more than %d entries: %w", id, MaxEntries, ErrCorrupt)
		}
	}
	return &m, nil
}

// Layer returns the layer mounted at mount, or nil.
func (m *Manifest) Layer(mount string) *Layer {
	for i := range m.Layers {
		if m.Layers[i].Mount == mount {
			return &m.Layers[i]
		}
	}
	return nil
}

// Restore fills dst, an empty filesystem, with layer l, reading its blobs
// from store and checking each against its hash. Writing to dst charges
// its quota, which bounds what a restore can allocate. Any mismatch is
// an error matching ErrCorrupt; dst is then half filled and must be
// discarded.
func Restore(ctx context.Context, store Store, l *Layer, dst vfs.FileSystem) error {
	root, err := dst.Root(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends a prefetcher
	var pf *prefetcher
	if _, ok := store.(remoteStore); ok {
		pf = startPrefetch(ctx, store, l)
	}
	nodes := map[string]vfs.Inode{".": root}
	type dirTime struct {
		n     vfs.Inode
		mtime int64
	}
	var dirs []dirTime
	buf := make([]byte, chunk)
	for i, e := range l.Entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		bad := func(why string) error {
			return fmt.Errorf("snapshot: layer %s entry %d (%q): %s: %w", l.Mount, i, e.Path, why, ErrCorrupt)
		}
		if e.Path == "." {
			if i != 0 || vfs.TypeOf(e.Mode) != vfs.TypeDir {
				return bad("misplaced root")
			}
			if err := setAttrs(ctx, root, e); err != nil {
				return err
			}
			dirs = append(dirs, dirTime{root, e.Mtime})
			continue
		}
		if !validPath(e.Path) {
			return bad("invalid path")
		}
		parent := nodes[path.Dir(e.Path)]
		if parent == nil {
			return bad("no parent")
		}
		name := path.Base(e.Path)
		if e.Link != "" {
			target := nodes[e.Link]
			if target == nil {
				return bad("link to an unknown entry")
			}
			if err := parent.Link(ctx, name, target); err != nil {
				return fmt.Errorf("snapshot: %s: %w", e.Path, err)
			}
			continue
		}
		opts := vfs.CreateOptions{Mode: e.Mode, UID: e.UID, GID: e.GID, Rdev: e.Rdev}
		var n vfs.Inode
		switch vfs.TypeOf(e.Mode) {
		case vfs.TypeDir:
			n, err = parent.Mkdir(ctx, name, opts)
		case vfs.TypeSymlink:
			n, err = parent.Symlink(ctx, name, e.Target, opts)
		case vfs.TypeRegular:
			if n, err = parent.Create(ctx, name, opts); err == nil && e.Size > 0 {
				err = fill(ctx, store, n, e, buf, pf.take(ctx, i))
			} else if err == nil && e.Blob != "" {
				err = bad("empty file with a blob")
			}
		case vfs.TypeFIFO, vfs.TypeSocket, vfs.TypeCharDev, vfs.TypeBlock:
			n, err = parent.Create(ctx, name, opts)
		default:
			return bad("unknown type")
		}
		if err != nil {
			return fmt.Errorf("snapshot: %s: %w", e.Path, err)
		}
		if err := setAttrs(ctx, n, e); err != nil {
			return fmt.Errorf("snapshot: %s: %w", e.Path, err)
		}
		nodes[e.Path] = n
		if vfs.TypeOf(e.Mode) == vfs.TypeDir {
			dirs = append(dirs, dirTime{n, e.Mtime})
		}
	}
	// Directory times last: making their entries changed them.
	for i := len(dirs) - 1; i >= 0; i-- {
		t := time.Unix(0, dirs[i].mtime)
		if err := dirs[i].n.SetAttr(ctx, vfs.SetAttr{Mask: vfs.SetMtime | vfs.SetAtime, Mtime: t, Atime: t}); err != nil {
			return err
		}
	}
	return nil
}

// setAttrs applies an entry's mode, owner and mtime to n.
func setAttrs(ctx context.Context, n vfs.Inode, e Entry) error {
	t := time.Unix(0, e.Mtime)
	attr := vfs.SetAttr{Mask: vfs.SetUID | vfs.SetGID | vfs.SetMtime | vfs.SetAtime, UID: e.UID, GID: e.GID, Mtime: t, Atime: t}
	if vfs.TypeOf(e.Mode) != vfs.TypeSymlink {
		attr.Mask |= vfs.SetMode
		attr.Mode = e.Mode & vfs.ModePerm
	}
	return n.SetAttr(ctx, attr)
}

// validPath reports whether p is a clean relative path of valid names.
func validPath(p string) bool {
	if p == "" || len(p) >= vfs.PathMax || path.Clean(p) != p || strings.HasPrefix(p, "/") || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	for _, name := range strings.Split(p, "/") {
		if name == ".." || name == "." || len(name) > vfs.NameMax {
			return false
		}
	}
	return true
}

// fill writes the blob of e into the file n, checking its size and hash:
// the blob pre fetched ahead, or else one it reads from store.
func fill(ctx context.Context, store Store, n vfs.Inode, e Entry, buf []byte, pre func() (io.ReadCloser, error)) error {
	if !validHash(e.Blob) {
		return fmt.Errorf("blob name %q: %w", e.Blob, ErrCorrupt)
	}
	open := pre
	if open == nil {
		open = func() (io.ReadCloser, error) { return store.OpenBlob(ctx, e.Blob) }
	}
	rc, err := open()
	if err != nil {
		return err
	}
	defer rc.Close()
	zr, err := gzip.NewReader(rc)
	if err != nil {
		return fmt.Errorf("blob %s: %w: %w", e.Blob, ErrCorrupt, err)
	}
	h, err := n.Open(ctx, vfs.O_WRONLY)
	if err != nil {
		return err
	}
	defer h.Close()
	sum := sha256.New()
	off, err := copyTo(ctx, h, io.LimitReader(zr, e.Size+1), buf, sum)
	if err != nil {
		var en errno.Errno
		if errors.As(err, &en) || ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("blob %s: %w: %w", e.Blob, ErrCorrupt, err)
	}
	if off != e.Size || hex.EncodeToString(sum.Sum(nil)) != e.Blob {
		return fmt.Errorf("blob %s: %w", e.Blob, ErrCorrupt)
	}
	return nil
}

// copyTo writes r into h from offset 0, hashing what it writes.
func copyTo(ctx context.Context, h vfs.Handle, r io.Reader, buf []byte, sum hash.Hash) (int64, error) {
	var off int64
	for {
		if err := ctx.Err(); err != nil {
			return off, err
		}
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			sum.Write(buf[:n])
			for p := buf[:n]; len(p) > 0; {
				w, err := h.WriteAt(ctx, p, off)
				if err != nil {
					return off, err
				}
				p, off = p[w:], off+int64(w)
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			return off, nil
		}
		if rerr != nil {
			return off, rerr
		}
	}
}
