package memfs

import (
	"fmt"
	"testing"
)

// TestTableChurnLeavesNothing: a guest that creates and removes files
// without end (inode numbers are never reused) must not leave empty table
// nodes behind, on either side of a fork.
func TestTableChurnLeavesNothing(t *testing.T) {
	fs := New(Options{})
	root := rootOf(t, fs)
	mustCreate(t, root, "keep")
	for i := range 5000 {
		mustCreate(t, root, "tmp")
		wantErr(t, "unlink", root.Unlink(bg, "tmp"), 0)
		if i == 2500 {
			c := mustClone(t, fs, nil)
			mustCreate(t, rootOf(t, c), "x")
		}
	}
	// Root (inode 1) and keep (2) are all that is left: one path down
	// to their leaf, and at most one more to the leaf new numbers go to.
	if got, max := countTableNodes(fs.inodes.root), 2*fs.inodes.levels-1; got > max {
		t.Fatalf("%d table nodes for 2 inodes in %d levels, want at most %d", got, fs.inodes.levels, max)
	}
	var live []uint64
	for ino := range uint64(6000) {
		if fs.inodes.get(ino) != nil {
			live = append(live, ino)
		}
	}
	if fmt.Sprint(live) != "[1 2]" {
		t.Fatalf("live inodes %v", live)
	}
}

func countTableNodes(n *tableNode) int {
	if n == nil {
		return 0
	}
	c := 1
	if n.kids != nil {
		for _, k := range n.kids {
			c += countTableNodes(k)
		}
	}
	return c
}
