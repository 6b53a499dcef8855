package main

import (
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// maxWalk bounds the commits one history walk visits.
const maxWalk = 1 << 22

// walker visits commits newest first the way git's revision walk does:
// a queue ordered by committer date where a commit goes after every
// queued one with the same or a later date (so equal dates come out in
// the order they were reached), parents queued in order.
type walker struct {
	rp          *repo
	queue       []*object.Commit
	seen        map[plumbing.Hash]bool
	excluded    map[plumbing.Hash]bool
	firstParent bool
	visited     int
	// shallow are a shallow clone's boundary commits: git walks them as
	// if they had no parents (theirs are not in the repository).
	shallow map[plumbing.Hash]bool
}

// newWalker starts at starts and leaves out every commit reachable from
// excludes (the ^A of A..B).
func newWalker(rp *repo, starts, excludes []plumbing.Hash) (*walker, error) {
	w := &walker{rp: rp, seen: map[plumbing.Hash]bool{}, excluded: map[plumbing.Hash]bool{}, shallow: map[plumbing.Hash]bool{}}
	shallow, err := rp.r.Storer.Shallow()
	if err != nil {
		return nil, err
	}
	for _, h := range shallow {
		w.shallow[h] = true
	}
	for _, h := range excludes {
		if err := w.exclude(h); err != nil {
			return nil, err
		}
	}
	var initial []*object.Commit
	for _, h := range starts {
		if w.seen[h] {
			continue
		}
		w.seen[h] = true
		c, err := peelCommit(rp, h)
		if err != nil {
			return nil, err
		}
		initial = append(initial, c)
	}
	// git sorts the starting points by date, stably.
	for _, c := range initial {
		i := len(w.queue)
		for i > 0 && w.queue[i-1].Committer.When.Before(c.Committer.When) {
			i--
		}
		w.queue = append(w.queue, nil)
		copy(w.queue[i+1:], w.queue[i:])
		w.queue[i] = c
	}
	return w, nil
}

// exclude marks h and its ancestors.
func (w *walker) exclude(h plumbing.Hash) error {
	stack := []plumbing.Hash{h}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if w.excluded[h] {
			continue
		}
		if len(w.excluded) > maxWalk {
			return fatalf("history too large to walk")
		}
		w.excluded[h] = true
		c, err := peelCommit(w.rp, h)
		if err != nil {
			return err
		}
		if !w.shallow[h] {
			stack = append(stack, c.ParentHashes...)
		}
	}
	return nil
}

// push queues c after every commit with the same or a later date.
func (w *walker) push(c *object.Commit) {
	i := 0
	for i < len(w.queue) && !w.queue[i].Committer.When.Before(c.Committer.When) {
		i++
	}
	w.queue = append(w.queue, nil)
	copy(w.queue[i+1:], w.queue[i:])
	w.queue[i] = c
}

// next returns the next commit, or nil at the end.
func (w *walker) next() (*object.Commit, error) {
	for len(w.queue) > 0 {
		c := w.queue[0]
		w.queue = w.queue[1:]
		w.visited++
		if w.visited > maxWalk {
			return nil, fatalf("history too large to walk")
		}
		if w.excluded[c.Hash] {
			continue
		}
		parents := c.ParentHashes
		if w.shallow[c.Hash] {
			parents = nil
		}
		if w.firstParent && len(parents) > 1 {
			parents = parents[:1]
		}
		for _, p := range parents {
			if w.seen[p] || w.excluded[p] {
				continue
			}
			w.seen[p] = true
			pc, err := w.rp.r.CommitObject(p)
			if err != nil {
				return nil, err
			}
			w.push(pc)
		}
		return c, nil
	}
	return nil, nil
}
