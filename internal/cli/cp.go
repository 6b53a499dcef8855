package cli

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/secexec/secexec/client"
	"github.com/secexec/secexec/internal/tarsafe"
)

// maxCopyEntries bounds the files of a directory copied out of a VM, as
// the server bounds an archive's.
const maxCopyEntries = 10000

func newCpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "cp [flags] SRC DST",
		Short: "Copy files and directories between this host and a server's VM (--server)",
		Long: `Copy a file or a directory into or out of a VM of a secexec server: one
of SRC and DST is VM:PATH, VM being the id 'secexec vm create' printed
and PATH an absolute guest path; the other is a host path, or "-" for
this process's stdin or stdout (a file's bytes). As cp(1): a destination
that is an existing directory receives SRC under its own name; otherwise
it is the new name. Directories travel as tar archives: regular files,
directories and symlinks.`,
		Example: `  secexec --server http://127.0.0.1:8080 cp ./src "$id":/work/src
  secexec --server http://127.0.0.1:8080 cp "$id":/work/out.json .
  secexec --server http://127.0.0.1:8080 cp "$id":/work/log.txt -`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := needRemote(cmd)
			if err != nil {
				return err
			}
			srcVM, src, srcRemote, err := cpArg(args[0])
			if err != nil {
				return err
			}
			dstVM, dst, dstRemote, err := cpArg(args[1])
			if err != nil {
				return err
			}
			switch {
			case srcRemote == dstRemote:
				return &usageError{err: errors.New("cp copies between this host and a VM: exactly one of SRC and DST is VM:PATH")}
			case dstRemote:
				return copyIn(cmd, c.VM(dstVM).FS(), src, dst)
			default:
				return copyOut(cmd, c.VM(srcVM).FS(), src, dst)
			}
		},
	}
}

// cpArg reads a cp operand: VM:/PATH (a VM id has no "/") or a host path.
func cpArg(s string) (vm, p string, remote bool, err error) {
	id, guest, ok := strings.Cut(s, ":")
	if !ok || id == "" || strings.Contains(id, "/") {
		if s == "" {
			return "", "", false, &usageError{err: errors.New("cp: an empty path")}
		}
		return "", s, false, nil
	}
	if !path.IsAbs(guest) {
		return "", "", false, &usageError{err: fmt.Errorf("cp %s: the guest path must be absolute (VM:/PATH)", s)}
	}
	return id, path.Clean(guest), true, nil
}

// copyIn copies the host file or directory src (or stdin, "-") to dst in
// the VM.
func copyIn(cmd *cobra.Command, vfs *client.FS, src, dst string) error {
	ctx := cmd.Context()
	if src == "-" {
		return vfs.WriteFrom(ctx, dst, cmd.InOrStdin())
	}
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if st, err := vfs.Lstat(ctx, dst); err == nil && st.IsDir() {
		dst = path.Join(dst, filepath.Base(filepath.Clean(src)))
	} else if err != nil && !errors.Is(err, client.ErrNotFound) {
		return err
	}
	switch {
	case fi.IsDir():
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeTar(ctx, pw, src)) }()
		err := vfs.WriteArchive(ctx, dst, pr)
		_ = pr.CloseWithError(err) // ends a writer the server stopped reading
		return err
	case fi.Mode().IsRegular():
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		return vfs.WriteFrom(ctx, dst, f)
	}
	return fmt.Errorf("cp %s: not a regular file or directory", src)
}

// writeTar writes the tree under dir to w: directories, regular files
// and symlinks (as links), names relative to dir.
func writeTar(ctx context.Context, w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		case fi.IsDir(), fi.Mode().IsRegular():
		default:
			return nil // devices, FIFOs and sockets stay here
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		h.Uname, h.Gname, h.Uid, h.Gid = "", "", 0, 0
		if fi.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyN(tw, f, h.Size)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// copyOut copies the VM's file or directory src to the host path dst
// (or a file to stdout, "-").
func copyOut(cmd *cobra.Command, vfs *client.FS, src, dst string) error {
	ctx := cmd.Context()
	st, err := vfs.Lstat(ctx, src)
	if err != nil {
		return err
	}
	if dst != "-" {
		if hi, err := os.Stat(dst); err == nil && hi.IsDir() {
			dst = filepath.Join(dst, path.Base(src))
		}
	}
	if st.IsDir() {
		if dst == "-" {
			return &usageError{err: fmt.Errorf("cp %s -: a directory does not go to stdout", src)}
		}
		rc, err := vfs.ReadArchive(ctx, src)
		if err != nil {
			return err
		}
		defer rc.Close()
		return extractTar(rc, dst)
	}
	rc, err := vfs.Open(ctx, src) // a symlink's target, like cp(1)
	if err != nil {
		return err
	}
	defer rc.Close()
	if dst == "-" {
		_, err = io.Copy(cmd.OutOrStdout(), rc)
		return err
	}
	mode := st.Mode.Perm()
	if st.Type != "file" {
		mode = 0o644
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// extractTar unpacks a VM's archive into the host directory dir,
// creating it. Everything happens through an os.Root of dir: no entry
// name and no symlink the archive makes can reach outside it.
func extractTar(r io.Reader, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tr := tar.NewReader(r)
	for n := 0; ; n++ {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the VM's archive: %w", err)
		}
		if n >= maxCopyEntries {
			return fmt.Errorf("the VM's archive has more than %d entries", maxCopyEntries)
		}
		name, err := tarsafe.Check(h)
		if err != nil {
			return err
		}
		if name == "" {
			continue
		}
		name = filepath.FromSlash(name)
		if d := filepath.Dir(name); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fs.FileMode(h.Mode).Perm())
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := root.Symlink(h.Linkname, name); err != nil {
				return err
			}
		}
	}
}
