package software

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/secexec/secexec/internal/tarsafe"
)

// nodeToolPins are the JavaScript tools a VM's node runs: the npm CLI
// (npm, npx), the TypeScript compiler (tsc, and vm.TS().Check) and node's
// type declarations, which a script checked without a project of its own
// gets (with undici-types, which they import).
// Integrity values are the registry's dist.integrity for each version.
var nodeToolPins = []Pin{
	{"npm", "11.19.1", "sha512-ztsxKxt/kkIaAs+2i0GU6I+DRmUdrNasxTZKJe9TCdSjKxlhah/4r/hl5ygMD6XAg1qZ9c2TNomR4qgOydp10g=="},
	{"typescript", "5.9.3", "sha512-jl1vZzPDinLr9eUt3J/t7V6FgNEw9QjvBPdysz9KfQDD41fQrC2Y4vKQdiaUpFT4bXlb1RHhLpp8wtm6M5TgSw=="},
	{"@types/node", "22.20.7", "sha512-F/Mcc4pD3YwXQCG50hb8BjB5RmrOere6hge7n2XHf0V8tpkZOVEjwYv9Ql7n0MpMn8Bv7+q12P9w6UHsBm0Sfw=="},
	{"undici-types", "6.21.0", "sha512-iwDZqg0QAGrg9Rav5H4n0M64c3mkR59cJ6wQp+7C4nI0gsmExaedaYLNO44eT4AtBBwjbTiGPMlt2Md0T9H9JQ=="},
}

// NodeToolPins returns the pinned JavaScript packages that run on a VM's
// node (npm, typescript, @types/node, undici-types).
func NodeToolPins() []Pin { return slices.Clone(nodeToolPins) }

// nodePackageLimits bound an unpacked JavaScript package; typescript 5.9
// is a 4 MB tarball of 23 MB in about 120 files, npm 11 about 2,600 files.
var nodePackageLimits = limits{tarball: 64 << 20, unpacked: 256 << 20, members: 20_000}

// FetchNodePackage fetches pin with npm (`npm pack`, from the registry the
// host's npm is configured with), verifies the tarball against the pin
// before reading any of it, and unpacks its tree (the members below their
// first path component, as npm does) into dst,
// which must not exist yet. Only directories and regular files are
// written (mode 0755 when any execute bit is set, else 0644); any other
// member, or a name that could leave dst, fails with ErrBadArchive. On
// failure nothing is left at dst.
func FetchNodePackage(ctx context.Context, npmExe string, pin Pin, dst string) error {
	if err := pin.validate(); err != nil {
		return err
	}
	if npmExe == "" {
		npmExe = "npm"
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".fetch-"+pin.Name()+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	tgz, err := npmPack(ctx, npmExe, pin, tmp)
	if err != nil {
		return err
	}
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := verifyTarball(f, pin, nodePackageLimits, func(Event) {}); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	tree := filepath.Join(tmp, "tree")
	if err := unpackPackageTree(f, tree, pin, nodePackageLimits); err != nil {
		return err
	}
	return os.Rename(tree, dst)
}

// unpackPackageTree writes the members of the gzipped tar in src beneath
// dst, without their first path component.
func unpackPackageTree(src io.Reader, dst string, pin Pin, lim limits) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrBadArchive, pin.Spec(), fmt.Sprintf(format, args...))
	}
	zr, err := gzip.NewReader(src)
	if err != nil {
		return bad("%v", err)
	}
	lr := &limitedReader{r: zr, n: lim.unpacked}
	tr := tar.NewReader(lr)
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	for members := 0; ; members++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return bad("%v", err)
		}
		if members >= lim.members {
			return bad("more than %d members", lim.members)
		}
		name, ok := safeMemberName(hdr.Name)
		if !ok {
			return bad("member name %q", hdr.Name)
		}
		if tarsafe.IsSparse(hdr) { // its zeros would escape the unpacked-size limit
			return bad("member %q is sparse", hdr.Name)
		}
		// npm drops the first component, whatever it is: "package/"
		// mostly, "node/" in @types/node.
		_, rel, ok := strings.Cut(name, "/")
		if !ok || rel == "" {
			continue
		}
		target := filepath.Join(dst, filepath.FromSlash(rel))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return fmt.Errorf("%w: %s: member %q: %w", ErrBadArchive, pin.Spec(), hdr.Name, err)
			}
		case tar.TypeReg:
			mode := os.FileMode(0o644)
			if hdr.Mode&0o111 != 0 {
				mode = 0o755
			}
			err := os.MkdirAll(filepath.Dir(target), 0o755)
			if err == nil {
				err = writeMember(target, tr, mode)
			}
			switch {
			case errors.Is(err, errUnpackLimit):
				return bad("unpacked size over %d bytes", lim.unpacked)
			case err != nil:
				// A duplicate member, a file where a directory is wanted:
				// not a tree npm would pack.
				return fmt.Errorf("%w: %s: member %q: %w", ErrBadArchive, pin.Spec(), hdr.Name, err)
			}
		default:
			return bad("member %q of type %q", hdr.Name, hdr.Typeflag)
		}
	}
}

func writeMember(name string, r io.Reader, mode os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
