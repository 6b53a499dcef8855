package js

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v8 "github.com/tommie/v8go"
)

// diskCache persists what the in-memory codeCache holds for large
// sources (V8 code caches of big modules such as undici or typescript,
// esbuild's transforms of big files) and the bootstrap's code cache, so
// that a new engine process does not compile them again. It lives in a
// host-owned directory; guests never name an entry: a file's name is the
// digest of the entry's kind, the content digest the caller keys by, and
// the fingerprint of everything the entry depends on besides its source
// (V8's version and flags, this executable's build). Entries are written
// to a temporary file and renamed, carry the digest of their payload and
// their own key, and are dropped (and removed) when either does not
// match, so a truncated, garbled or misplaced file costs a compile and
// nothing else. V8 also checks a code cache's own header (its version,
// flags, the source's length) and refuses a mismatch, but not the
// source's content: the content digest in the name is what ties an entry
// to its source. The directory is bounded in bytes: past the bound the
// least recently used entries (by modification time, touched on each hit)
// are removed.
type diskCache struct {
	dir string
	ns  [32]byte // fingerprint of V8 and this executable
	max int64    // bytes of entries kept
	log *slog.Logger

	// Writes run one at a time (wmu) in the background; pending bounds
	// the bytes waiting, and a put past it is dropped (a later process
	// writes the entry), so a guest that compiles many large sources
	// cannot make the host queue writes without bound.
	wmu     sync.Mutex
	pending atomic.Int64
	wg      sync.WaitGroup

	mu   sync.Mutex
	size int64 // bytes in dir as last counted plus written since; -1 before the first count
	// written counts the bytes this process wrote since it last counted
	// the directory: other engine processes write to it too, so it is
	// counted again after every max/8 bytes written here.
	written int64

	hits, misses, bad, writes, rejected atomic.Int64
}

// Disk cache bounds and layout.
const (
	// DefaultDiskCacheBytes bounds the on-disk code cache unless
	// Config.DiskCacheBytes says otherwise.
	DefaultDiskCacheBytes = 512 << 20
	// maxDiskEntry bounds one entry, and maxDiskPending the bytes
	// waiting to be written.
	maxDiskEntry   = 64 << 20
	maxDiskPending = 64 << 20
	// diskMinSource is the smallest source (in bytes) whose caches go to
	// disk: compiling smaller ones costs less than reading a file.
	diskMinSource = 32 << 10
	// diskMagic starts every entry; its last byte is the format version.
	diskMagic = "SXV8CC\x00\x01"
	// diskHeader is magic, payload digest, key, payload length.
	diskHeader = len(diskMagic) + 32 + 32 + 8
	// diskTempAge is how old a temporary file must be before a count of
	// the directory removes it as left over by a crashed writer.
	diskTempAge = time.Minute
)

// Kinds of disk cache entries.
const (
	diskCode      = "code"      // V8 code cache of a compiled source
	diskTransform = "transform" // modules.Module of a transformed source
	diskBoot      = "boot"      // the bootstrap's code cache
)

// errDiskEntry marks an entry that failed verification.
var errDiskEntry = errors.New("js: damaged code cache entry")

// newDiskCache returns the cache in dir, or nil when max is not
// positive or this executable has no fingerprint (a cache that cannot
// tell builds apart could hand one build another's transforms).
func newDiskCache(dir string, max int64, flags []string, log *slog.Logger) *diskCache {
	if max <= 0 || dir == "" {
		return nil
	}
	build := exeFingerprint()
	if build == "" {
		log.Debug("js: no executable fingerprint; on-disk code cache off")
		return nil
	}
	h := sha256.New()
	for _, s := range append([]string{"v8 " + v8.Version(), "build " + build}, flags...) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	c := &diskCache{dir: dir, max: max, log: log, size: -1}
	h.Sum(c.ns[:0])
	return c
}

// exeFingerprint identifies this executable's build: Go's build ID from
// the ELF note, else the executable's size and modification time.
func exeFingerprint() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if f, err := elf.Open(exe); err == nil {
		defer f.Close()
		if s := f.Section(".note.go.buildid"); s != nil && s.Size < 4096 {
			if b, err := s.Data(); err == nil && len(b) > 0 {
				return hex.EncodeToString(b)
			}
		}
	}
	st, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return exe + " " + strconv.FormatInt(st.Size(), 10) + " " + strconv.FormatInt(st.ModTime().UnixNano(), 10)
}

// entryKey is the digest an entry is stored and checked under.
func (c *diskCache) entryKey(kind, key string) [32]byte {
	h := sha256.New()
	h.Write(c.ns[:])
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(key))
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func (c *diskCache) path(k [32]byte) string {
	return filepath.Join(c.dir, hex.EncodeToString(k[:]))
}

// get returns the payload stored for (kind, key). A damaged entry is
// removed and reported as a miss.
func (c *diskCache) get(kind, key string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	k := c.entryKey(kind, key)
	name := c.path(k)
	data, err := readEntry(name, k)
	if err != nil {
		c.misses.Add(1)
		if errors.Is(err, errDiskEntry) {
			c.bad.Add(1)
			c.log.Debug("js: dropped a damaged code cache entry", "file", name, "err", err)
			_ = os.Remove(name)
		}
		return nil, false
	}
	c.hits.Add(1)
	// Touch the entry: eviction goes by modification time.
	now := time.Now()
	_ = os.Chtimes(name, now, now)
	return data, true
}

// readEntry reads and verifies the entry file name stored under k.
func readEntry(name string, k [32]byte) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var hdr [diskHeader]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return nil, errors.Join(errDiskEntry, err)
	}
	if string(hdr[:len(diskMagic)]) != diskMagic {
		return nil, errors.Join(errDiskEntry, errors.New("bad magic"))
	}
	sum := hdr[len(diskMagic) : len(diskMagic)+32]
	if !bytes.Equal(hdr[len(diskMagic)+32:len(diskMagic)+64], k[:]) {
		return nil, errors.Join(errDiskEntry, errors.New("stored under another key"))
	}
	n := binary.LittleEndian.Uint64(hdr[len(diskMagic)+64:])
	if n > maxDiskEntry {
		return nil, errors.Join(errDiskEntry, errors.New("too large"))
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, errors.Join(errDiskEntry, err)
	}
	var one [1]byte
	if m, _ := f.Read(one[:]); m != 0 {
		return nil, errors.Join(errDiskEntry, errors.New("trailing bytes"))
	}
	if got := sha256.Sum256(data); !bytes.Equal(got[:], sum) {
		return nil, errors.Join(errDiskEntry, errors.New("digest mismatch"))
	}
	return data, nil
}

// put stores data for (kind, key) in the background. It is dropped when
// it is larger than an entry may be or too much waits to be written.
func (c *diskCache) put(kind, key string, data []byte) {
	if c == nil || len(data) == 0 || len(data) > maxDiskEntry {
		return
	}
	n := int64(len(data))
	if c.pending.Add(n) > maxDiskPending {
		c.pending.Add(-n)
		return
	}
	k := c.entryKey(kind, key)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer c.pending.Add(-n)
		c.wmu.Lock()
		defer c.wmu.Unlock()
		if err := c.write(k, data); err != nil {
			c.log.Debug("js: code cache entry not written", "kind", kind, "err", err)
		}
	}()
}

// write stores one entry: a temporary file renamed into place, so a
// reader in this or another engine process sees the whole entry or none.
func (c *diskCache) write(k [32]byte, data []byte) error {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(c.dir, ".tmp-*")
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	hdr := make([]byte, 0, diskHeader)
	hdr = append(hdr, diskMagic...)
	hdr = append(hdr, sum[:]...)
	hdr = append(hdr, k[:]...)
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(data)))
	_, err = tmp.Write(hdr)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), c.path(k))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	c.writes.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := int64(len(hdr) + len(data))
	c.written += n
	if c.size >= 0 {
		c.size += n
	}
	if c.size < 0 || c.size > c.max || c.written > c.max/8 {
		c.size, c.written = c.trim(), 0
	}
	return nil
}

// trim counts the directory's entries and, past the bound, removes the
// least recently used down to three quarters of it, so that trimming is
// not needed at every write. It also removes temporary files a crashed
// writer left. It returns the bytes left. Called with mu held.
func (c *diskCache) trim() int64 {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return -1
	}
	type entry struct {
		name string
		size int64
		mod  time.Time
	}
	var all []entry
	var total int64
	for _, de := range ents {
		info, err := de.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if strings.HasPrefix(de.Name(), ".tmp-") {
			if time.Since(info.ModTime()) > diskTempAge {
				_ = os.Remove(filepath.Join(c.dir, de.Name()))
			}
			continue
		}
		all = append(all, entry{de.Name(), info.Size(), info.ModTime()})
		total += info.Size()
	}
	if total <= c.max {
		return total
	}
	slices.SortFunc(all, func(a, b entry) int { return a.mod.Compare(b.mod) })
	for _, e := range all {
		if total <= c.max/4*3 {
			break
		}
		if err := os.Remove(filepath.Join(c.dir, e.name)); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= e.size
		}
	}
	return total
}

// wait waits for the write in flight, if any.
func (c *diskCache) wait() {
	if c != nil {
		c.wg.Wait()
	}
}

// DiskCacheStats describe the on-disk code cache.
type DiskCacheStats struct {
	// Hits and Misses count lookups; Damaged counts entries that failed
	// verification and were removed; Writes counts entries written;
	// Rejected counts code caches read from disk that V8 refused (made
	// for another source or V8), which were then compiled afresh.
	Hits, Misses, Damaged, Writes, Rejected int64
}

func (c *diskCache) stats() DiskCacheStats {
	if c == nil {
		return DiskCacheStats{}
	}
	return DiskCacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Damaged: c.bad.Load(), Writes: c.writes.Load(), Rejected: c.rejected.Load()}
}
