package vm

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/secexec/secexec/kernel/fs/memfs"
	"github.com/secexec/secexec/kernel/vfs"
)

// The base image is the read-only bottom layer of every VM's root: the
// directory skeleton and the files in /etc. It is identical for every VM,
// so it is built once per host process and shared; the overlay never
// writes to a lower layer.
var (
	baseOnce sync.Once
	baseFS   vfs.FileSystem
	baseErr  error
)

type baseDir struct {
	path     string
	mode     uint32
	uid, gid uint32
}

var baseDirs = []baseDir{
	{"/usr", 0o755, 0, 0},
	{"/usr/bin", 0o755, 0, 0},
	{"/usr/sbin", 0o755, 0, 0},
	{"/usr/local", 0o755, 0, 0},
	{"/usr/local/bin", 0o755, 0, 0},
	{"/usr/lib", 0o755, 0, 0},
	{"/usr/share", 0o755, 0, 0},
	{"/etc", 0o755, 0, 0},
	{"/home", 0o755, 0, 0},
	{UserHome, 0o755, UserUID, UserGID},
	{"/root", 0o700, 0, 0},
	{"/tmp", 0o1777, 0, 0},
	{"/var", 0o755, 0, 0},
	{"/var/tmp", 0o1777, 0, 0},
	{"/var/log", 0o755, 0, 0},
	{"/opt", 0o755, 0, 0},
	{"/mnt", 0o755, 0, 0},
	{"/srv", 0o755, 0, 0},
	{"/dev", 0o755, 0, 0},
	{"/proc", 0o555, 0, 0},
	{Workspace, 0o755, UserUID, UserGID},
}

func baseFiles(hostname string) map[string]string {
	uid, gid := strconv.Itoa(UserUID), strconv.Itoa(UserGID)
	return map[string]string{
		"/etc/passwd": "root:x:0:0:root:/root:/bin/sh\n" +
			UserName + ":x:" + uid + ":" + gid + "::" + UserHome + ":/bin/sh\n" +
			"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"/etc/group":    "root:x:0:\n" + UserName + ":x:" + gid + ":" + UserName + "\nnogroup:x:65534:\n",
		"/etc/hostname": hostname + "\n",
		"/etc/hosts":    "127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.1.1\t" + hostname + "\n",
		// The VM has no network unless the policy grants one; the resolver
		// points at loopback so nothing leaks the host's configuration.
		"/etc/resolv.conf": "nameserver 127.0.0.1\n",
		"/etc/os-release":  "NAME=\"secexec\"\nID=secexec\nPRETTY_NAME=\"secexec sandbox\"\n",
		"/etc/shells":      "/bin/sh\n/bin/bash\n",
	}
}

// baseImage returns the shared base layer. A hostname other than the
// default is written later into the VM's own upper layer.
func baseImage(ctx context.Context, hostname string) (vfs.FileSystem, error) {
	baseOnce.Do(func() { baseFS, baseErr = buildBase(ctx) })
	return baseFS, baseErr
}

func buildBase(ctx context.Context) (vfs.FileSystem, error) {
	epoch := time.Unix(0, 0).UTC()
	fs := memfs.New(memfs.Options{Now: func() time.Time { return epoch }})
	v, err := vfs.New(ctx, fs, vfs.Options{})
	if err != nil {
		return nil, err
	}
	c := &vfs.Caller{Cwd: "/"}
	for _, d := range baseDirs {
		if err := v.Mkdir(ctx, c, d.path, d.mode); err != nil {
			return nil, fmt.Errorf("%s: %w", d.path, err)
		}
		attr := vfs.SetAttr{Mask: vfs.SetMode | vfs.SetUID | vfs.SetGID, Mode: d.mode, UID: d.uid, GID: d.gid}
		if err := v.SetAttr(ctx, c, d.path, false, attr); err != nil {
			return nil, err
		}
	}
	// Merged /usr, as current distributions have it: one place for
	// commands, whichever directory a script names.
	for link, target := range map[string]string{"/bin": "usr/bin", "/sbin": "usr/sbin", "/lib": "usr/lib"} {
		if err := v.Symlink(ctx, c, target, link); err != nil {
			return nil, err
		}
	}
	for p, data := range baseFiles("secexec") {
		if err := writeFile(ctx, v, c, p, []byte(data), 0o644); err != nil {
			return nil, err
		}
	}
	return fs, nil
}

func writeFile(ctx context.Context, v *vfs.VFS, c *vfs.Caller, p string, data []byte, mode uint32) error {
	f, err := v.Open(ctx, c, p, vfs.O_WRONLY|vfs.O_CREAT|vfs.O_TRUNC, mode)
	if err != nil {
		return err
	}
	defer f.DecRef()
	for len(data) > 0 {
		n, err := f.Write(ctx, data)
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}
