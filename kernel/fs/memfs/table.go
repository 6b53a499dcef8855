package memfs

// table maps inode numbers to cores: a persistent radix tree of 64-way
// nodes indexed by the bits of the number (inode numbers are dense, so
// 100k inodes need three levels). Copying a table is copying its root
// pointer, which is how Clone shares every core in O(1). Each node carries
// the epoch it was made in: a table changes a node of its own epoch in
// place and copies one of an older epoch (a node another table may share)
// first, so each change after a fork copies at most one path of
// tableLevels nodes.
type table struct {
	root   *tableNode
	levels int // levels of root above the cores: 64^levels numbers fit
}

const (
	tableShift = 6
	tableWidth = 1 << tableShift
	tableMask  = tableWidth - 1
)

// tableNode is an inner node (kids) or a leaf (cores), never both. used
// counts its non-nil slots: a node that empties is dropped from its
// parent, so a guest creating and removing files without end (inode
// numbers are never reused) leaves no trail of empty nodes behind.
type tableNode struct {
	epoch uint64
	used  int
	kids  *[tableWidth]*tableNode
	cores *[tableWidth]*core
}

// fits reports whether ino is below the table's capacity. Shifts of 64
// bits or more are 0 in Go, so the widest table holds every number.
func (t *table) fits(ino uint64) bool {
	return t.root != nil && ino>>(tableShift*t.levels) == 0
}

// get returns the core of ino, or nil.
func (t *table) get(ino uint64) *core {
	if !t.fits(ino) {
		return nil
	}
	n := t.root
	for l := t.levels - 1; l > 0; l-- {
		n = n.kids[(ino>>(tableShift*l))&tableMask]
		if n == nil {
			return nil
		}
	}
	return n.cores[ino&tableMask]
}

// set makes c the core of ino, copying the nodes on its path that are
// not of epoch.
func (t *table) set(ino uint64, c *core, epoch uint64) {
	for !t.fits(ino) {
		if t.root == nil {
			t.root, t.levels = newTableNode(epoch, true), 1
			continue
		}
		up := newTableNode(epoch, false)
		up.kids[0], up.used = t.root, 1
		t.root, t.levels = up, t.levels+1
	}
	n := own(&t.root, epoch)
	for l := t.levels - 1; l > 0; l-- {
		slot := &n.kids[(ino>>(tableShift*l))&tableMask]
		if *slot == nil {
			*slot = newTableNode(epoch, l == 1)
			n.used++
		}
		n = own(slot, epoch)
	}
	slot := &n.cores[ino&tableMask]
	if *slot == nil {
		n.used++
	}
	*slot = c
}

// del removes ino, copying the nodes on its path that are not of epoch.
// A node left empty is dropped if no inode number from next on (numbers
// are handed out in order and never reused) can fall in its range: a
// create/remove loop then reuses the one leaf it works in instead of
// making and dropping it each time.
func (t *table) del(ino uint64, epoch, next uint64) {
	if t.get(ino) == nil {
		return
	}
	if t.clear(&t.root, t.levels-1, ino, epoch, next) {
		t.root, t.levels = nil, 0
	}
}

// clear removes ino, which is present, below *p at level l, and reports
// whether *p became empty and droppable (the caller then drops it).
func (t *table) clear(p **tableNode, l int, ino uint64, epoch, next uint64) bool {
	n := own(p, epoch)
	i := (ino >> (tableShift * l)) & tableMask
	if l == 0 {
		n.cores[i] = nil
	} else if !t.clear(&n.kids[i], l-1, ino, epoch, next) {
		return false
	} else {
		n.kids[i] = nil
	}
	n.used--
	// The last number of n's range; a shift of 64 or more is the whole
	// number space.
	shift := uint(tableShift * (l + 1))
	last := ^uint64(0)
	if shift < 64 {
		last = ino | (1<<shift - 1)
	}
	return n.used == 0 && last < next
}

// forked returns a copy of t that shares all its nodes.
func (t *table) forked() table { return *t }

func newTableNode(epoch uint64, leaf bool) *tableNode {
	n := &tableNode{epoch: epoch}
	if leaf {
		n.cores = new([tableWidth]*core)
	} else {
		n.kids = new([tableWidth]*tableNode)
	}
	return n
}

// own returns the node *p after making it one of epoch, copying it (and
// storing the copy in *p) if it is older.
func own(p **tableNode, epoch uint64) *tableNode {
	n := *p
	if n.epoch == epoch {
		return n
	}
	cp := &tableNode{epoch: epoch, used: n.used}
	if n.kids != nil {
		kids := *n.kids
		cp.kids = &kids
	} else {
		cores := *n.cores
		cp.cores = &cores
	}
	*p = cp
	return cp
}
