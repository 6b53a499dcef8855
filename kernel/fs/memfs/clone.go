package memfs

import (
	"context"

	"github.com/secexec/secexec/kernel/errno"
)

// Clone returns a copy of the filesystem that shares everything with it
// copy-on-write, in time independent of the number and size of its files:
// both filesystems take a new epoch, which freezes every existing inode,
// and the copy starts from the source's inode table, shared in O(1). From
// then on the first change of an inode on either side copies it there
// (attributes first; a directory's entries or a file's pages when they
// change), so writes on either side, through handles opened before the
// clone too, are invisible to the other.
//
// The copy is charged in full to opts.Quota, which may be another VM's,
// with what the source has charged (every name and every byte of data):
// with too little room Clone fails with ENOSPC and charges nothing. Files
// of the source with no name left but open handles are not part of the
// copy: it is neither charged for them nor keeps their data alive.
//
// Clone waits for the changes in progress on the source and holds off new
// ones while it runs, which is for as long as it takes to drop those
// unnamed open files from the copy's table.
func (fs *FS) Clone(ctx context.Context, opts Options) (*FS, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dst := newFS(opts)
	fs.forkMu.Lock()
	defer fs.forkMu.Unlock()
	bytes, inodes := fs.bytes.Load(), fs.icount.Load()
	if bytes < 0 || inodes < 0 {
		// Released: its data is no longer accounted for anywhere.
		return nil, errno.EIO
	}
	fs.viewsMu.Lock()
	defer fs.viewsMu.Unlock()
	// No change runs (forkMu), so the orphans' cores are stable.
	for _, f := range fs.orphans {
		bytes -= f.c.size
		inodes--
	}
	if err := dst.quota.ChargeBytes(bytes); err != nil {
		return nil, err
	}
	if err := dst.quota.ChargeInodes(inodes); err != nil {
		dst.quota.ReleaseBytes(bytes)
		return nil, err
	}
	dst.bytes.Store(bytes)
	dst.icount.Store(inodes)

	fs.epoch = epochs.Add(1)
	dst.inodes = fs.inodes.forked()
	dst.lastIno.Store(fs.lastIno.Load())
	for ino := range fs.orphans {
		dst.inodes.del(ino, dst.epoch, dst.lastIno.Load()+1)
	}
	root := &dir{}
	root.bindIno(dst, fs.root.ino, dst.inodes.get(fs.root.ino))
	dst.root = root
	dst.views.Store(root.ino, root)
	return dst, nil
}
