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

// tableNode is an inner node (kids) or a leaf (cores), never both.
type tableNode struct {
	epoch uint64
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

// set makes c (nil to delete) the core of ino, copying the nodes on its
// path that are not of epoch.
func (t *table) set(ino uint64, c *core, epoch uint64) {
	if c == nil && t.get(ino) == nil {
		return
	}
	for !t.fits(ino) {
		if t.root == nil {
			t.root, t.levels = newTableNode(epoch, true), 1
			continue
		}
		up := newTableNode(epoch, false)
		up.kids[0] = t.root
		t.root, t.levels = up, t.levels+1
	}
	n := own(&t.root, epoch)
	for l := t.levels - 1; l > 0; l-- {
		slot := &n.kids[(ino>>(tableShift*l))&tableMask]
		if *slot == nil {
			*slot = newTableNode(epoch, l == 1)
		}
		n = own(slot, epoch)
	}
	n.cores[ino&tableMask] = c
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
	cp := &tableNode{epoch: epoch}
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
