package software

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/secexec/secexec/internal/tarsafe"
)

// aospkgMember is the container's name inside an npm tarball.
const aospkgMember = "package/dist/package.aospkg"

// limits bound what a tarball may make the store do. Pinned tarballs are
// verified before they are unpacked, so these are defence in depth.
type limits struct {
	tarball  int64 // compressed tarball bytes
	unpacked int64 // all decompressed bytes, tar headers included
	aospkg   int64 // the one member kept
	members  int   // tar members
}

// defaultLimits are far above the published packages (coreutils: 29 MB
// tarball, 67 MB container, 5 members).
var defaultLimits = limits{tarball: 512 << 20, unpacked: 2 << 30, aospkg: 1 << 30, members: 100_000}

// verifyTarball hashes the file at name with sha512 and compares the result
// with the pin. It reads the whole file before any byte of it is used.
func verifyTarball(f *os.File, pin Pin, lim limits, report func(Event)) error {
	want, err := pin.sha512()
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() > lim.tarball {
		return fmt.Errorf("%w: %s: tarball is %d bytes, limit %d", ErrBadArchive, pin.Spec(), fi.Size(), lim.tarball)
	}
	h := sha512.New()
	pw := newProgress(report, pin, PhaseVerifying, fi.Size())
	if _, err := io.Copy(io.MultiWriter(h, pw), io.NewSectionReader(f, 0, fi.Size())); err != nil {
		return err
	}
	pw.done()
	if got := h.Sum(nil); !bytes.Equal(got, want) {
		return &IntegrityError{Spec: pin.Spec(), Want: pin.Integrity, Got: integrityOf(got)}
	}
	return nil
}

// extractAospkg copies package/dist/package.aospkg out of the gzipped tar
// in src into dst and returns its sha256.
func extractAospkg(src io.Reader, dst io.Writer, pin Pin, lim limits, report func(Event)) (sum []byte, err error) {
	return extractMember(src, dst, pin, aospkgMember, lim.aospkg, lim, report)
}

// extractMember copies the regular file member (at most maxSize bytes) out
// of the gzipped tar in src into dst and returns its sha256. Every member
// name is checked, and the whole archive is read so a second copy of the
// member (which would make the choice ambiguous) is caught.
func extractMember(src io.Reader, dst io.Writer, pin Pin, member string, maxSize int64, lim limits, report func(Event)) (sum []byte, err error) {
	zr, err := gzip.NewReader(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadArchive, pin.Spec(), err)
	}
	defer zr.Close()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{ErrBadArchive, pin.Spec()}, args...)...)
	}
	lr := &limitedReader{r: zr, n: lim.unpacked}
	tr := tar.NewReader(lr)
	var h hash.Hash
	for members := 0; ; members++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if lr.n <= 0 {
				return nil, bad("unpacks to more than %d bytes", lim.unpacked)
			}
			return nil, bad("%v", err)
		}
		if members >= lim.members {
			return nil, bad("more than %d members", lim.members)
		}
		name, ok := safeMemberName(hdr.Name)
		if !ok {
			return nil, bad("unsafe member name %q", hdr.Name)
		}
		if tarsafe.IsSparse(hdr) { // its zeros would escape the unpacked-size limit
			return nil, bad("member %q is sparse", hdr.Name)
		}
		if name != member {
			continue
		}
		if h != nil {
			return nil, bad("%s occurs twice", member)
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, bad("%s is not a regular file", member)
		}
		if hdr.Size > maxSize {
			return nil, bad("%s is %d bytes, limit %d", member, hdr.Size, maxSize)
		}
		h = sha256.New()
		pw := newProgress(report, pin, PhaseUnpacking, hdr.Size)
		n, err := io.Copy(io.MultiWriter(destWriter{dst}, h, pw), tr)
		if err != nil {
			var we *writeError
			if errors.As(err, &we) {
				return nil, we.err
			}
			if lr.n <= 0 {
				return nil, bad("unpacks to more than %d bytes", lim.unpacked)
			}
			return nil, bad("%s: %v", member, err)
		}
		if n != hdr.Size {
			return nil, bad("%s: short data", member)
		}
		pw.done()
	}
	if h == nil {
		return nil, bad("no %s", member)
	}
	return h.Sum(nil), nil
}

// safeMemberName cleans a tar member name and rejects any that could leave
// an extraction root (tarsafe.Name: absolute names, ".." elements,
// backslashes, NUL bytes). Only one member is ever written, but a tarball
// carrying such names is not one npm would produce.
func safeMemberName(name string) (string, bool) {
	clean, err := tarsafe.Name(name)
	if err != nil {
		return "", false
	}
	if clean == "" { // "." or "./": the root itself
		clean = "."
	}
	return clean, true
}

// limitedReader is io.LimitedReader that reports running out as an error
// instead of a clean EOF, so a truncated-by-limit archive is never taken
// for a complete one.
type limitedReader struct {
	r io.Reader
	n int64
}

var errUnpackLimit = errors.New("unpacked size limit reached")

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errUnpackLimit
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// writeError marks an error from the destination file, so it is not
// mistaken for a problem with the archive.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }

// destWriter wraps dst so its errors come back as *writeError.
type destWriter struct{ w io.Writer }

func (d destWriter) Write(p []byte) (int, error) {
	n, err := d.w.Write(p)
	if err != nil {
		err = &writeError{err}
	}
	return n, err
}

// hexSum formats a digest for the metadata file.
func hexSum(b []byte) string { return hex.EncodeToString(b) }
