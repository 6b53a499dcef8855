package policy

import (
	"math/bits"
	"slices"
	"strings"
	"time"
)

// A rule protects a path, but rename and link act on objects: they give an
// object another name, and a directory's rename gives every object beneath
// it another name. If the policy decided anything differently at the new
// name, the object would escape the rule ("ln secret x; cat x", "mv .git g;
// write g/config; mv g .git"). CheckFSRelocate refuses exactly those moves:
// it allows a link or rename only when the policy decides the same at the
// old and the new name, for the object itself and, for a directory, for
// every path beneath it.

// objectOps are the operations that act on the object a name leads to
// rather than on the name: what a second name for a file could be used
// for. rename, symlink, mkdir and mount act on names (or create them) and
// are checked on the names themselves; link is here because a new name
// must not let an object be linked that could not be linked before.
var objectOps = [...]FSOp{FSRead, FSWrite, FSStat, FSTruncate, FSChmod, FSChown, FSUtimes,
	FSRemove, FSLink}

// ObjectOps returns the operations CheckFSRelocate compares for a file (a
// fresh slice). For a directory it compares every operation, on the
// directory and on every path beneath it.
func ObjectOps() []FSOp { return append([]FSOp(nil), objectOps[:]...) }

// CheckFSRelocate reports whether the object at from (an absolute guest
// path, symlinks resolved) may also or instead be named to: op is FSLink
// for a hard link and FSRename for a rename, and only labels the decision.
// With tree unset (a file, a symlink, a FIFO), every operation in
// ObjectOps must be decided alike on from and to. With tree set (a
// directory), every operation must be decided alike on from/S and to/S for
// every suffix S, including the empty one; the check is conservative and
// may refuse a pair whose decisions only happen to agree, but it never
// allows a pair on which some path beneath would be decided differently.
//
// It does not check op itself on either path (CheckFS does that). A
// refusal is a *DeniedError with To set and Rule -1.
func (c *Checker) CheckFSRelocate(op FSOp, from, to string, tree bool) error {
	_, okOp := fsOpIndex(op)
	a, okA := canonPath(from)
	b, okB := canonPath(to)
	if c == nil || !okOp || !okA || !okB {
		return c.decideRelocate(op, from, to, false)
	}
	if !tree {
		for _, o := range objectOps {
			i, _ := fsOpIndex(o)
			if c.fsAllowed(i, a) != c.fsAllowed(i, b) {
				return c.decideRelocate(op, from, to, false)
			}
		}
		return c.decideRelocate(op, from, to, true)
	}
	if a == b {
		return c.decideRelocate(op, from, to, true)
	}
	for i := range c.fs {
		if !c.sameSubtree(i, a, b) {
			return c.decideRelocate(op, from, to, false)
		}
	}
	return c.decideRelocate(op, from, to, true)
}

// decideRelocate audits and builds the error of a CheckFSRelocate.
func (c *Checker) decideRelocate(op FSOp, from, to string, allow bool) error {
	if c != nil && c.audit != nil && (!allow || c.auditAllows) {
		c.audit(Event{Time: time.Now(), Domain: DomainFS, Op: string(op), Target: from, To: to,
			Allowed: allow, Rule: -1})
	}
	if allow {
		return nil
	}
	return &DeniedError{Domain: DomainFS, Op: string(op), Target: from, To: to, Rule: -1}
}

// fsAllowed is CheckFS on a canonical path without auditing.
func (c *Checker) fsAllowed(op int, p string) bool {
	for _, r := range c.fs[op] {
		for k := range r.pats {
			if r.pats[k].match(p) {
				return r.allow
			}
		}
	}
	return false
}

// sameSubtree reports whether op's decision on a/S equals that on b/S for
// every suffix S. It reduces the rules to what they say about the subtree
// of a and of b (subtreeForm) and compares the two: equal forms decide
// every suffix alike.
func (c *Checker) sameSubtree(op int, a, b string) bool {
	fa, da := c.subtreeForm(op, a)
	fb, db := c.subtreeForm(op, b)
	return da == db && slices.EqualFunc(fa, fb, func(x, y ruleResidual) bool {
		return x.idx == y.idx && slices.Equal(x.res, y.res)
	})
}

// ruleResidual is one rule reduced to a subtree: what its live patterns
// still need to see beneath the subtree's root.
type ruleResidual struct {
	idx   int
	allow bool
	res   []residual
}

// subtreeForm reduces op's rules to the subtree at dir: a decision list of
// the rules that match some but not all paths there, in checking order,
// and the default that decides the rest (the first rule matching the whole
// subtree, or deny). Rules that match nothing there are dropped, and so
// are rules at the end of the list whose effect is the default's: they
// change no decision.
func (c *Checker) subtreeForm(op int, dir string) ([]ruleResidual, bool) {
	var form []ruleResidual
	def := false
rules:
	for _, r := range c.fs[op] {
		var res []residual
		for k := range r.pats {
			x := r.pats[k].residualAt(dir)
			switch x.kind {
			case resFull:
				def = r.allow
				break rules
			case resDead:
				continue
			}
			x.pat = k
			res = append(res, x)
		}
		if len(res) > 0 {
			form = append(form, ruleResidual{idx: r.idx, allow: r.allow, res: res})
		}
	}
	for len(form) > 0 && form[len(form)-1].allow == def {
		form = form[:len(form)-1]
	}
	return form, def
}

// resKind classifies what a pattern still matches beneath a directory.
type resKind uint8

const (
	resDead resKind = iota // nothing at or beneath it
	resFull                // everything at and beneath it
	resLit                 // the directory is inside the literal prefix; rem is the rest of it
	resNFA                 // the directory is past the literal prefix; state is the NFA's
)

// residual is a pattern's state after reading a directory's path: two
// equal residuals of the same pattern match exactly the same suffixes.
type residual struct {
	pat   int // the pattern's index in its rule
	kind  resKind
	rem   string
	state uint64
}

// residualAt runs the pattern over the segments of dir (canonical: no
// leading slash, "" for the root) and returns where it stands. It never
// claims resFull or resDead wrongly; a pattern that happens to match every
// suffix in a way the matcher cannot see stays a partial residual.
func (p *segPattern) residualAt(dir string) residual {
	if p.kind == patAll {
		return residual{kind: resFull}
	}
	// The directory lies inside the literal prefix: the pattern still
	// needs the rest of the prefix, then whatever follows it.
	if dir == "" && p.lit != "" {
		return residual{kind: resLit, rem: p.lit}
	}
	if dir != "" && strings.HasPrefix(p.lit, dir) && len(p.lit) > len(dir) && p.lit[len(dir)] == p.sep {
		return residual{kind: resLit, rem: p.lit[len(dir)+1:]}
	}
	// Past the literal prefix: what is left of dir after it.
	var rest string
	switch {
	case dir == p.lit:
	case p.lit == "":
		rest = dir
	case strings.HasPrefix(dir, p.litSep):
		rest = dir[len(p.litSep):]
	default:
		return residual{kind: resDead}
	}
	switch p.kind {
	case patExact:
		if rest == "" {
			return residual{kind: resLit} // the directory itself, nothing beneath
		}
		return residual{kind: resDead}
	case patTree:
		return residual{kind: resFull}
	case patDeep:
		// "**/X": the globstar takes any prefix, so only whether the
		// directory's own last segment matched X is left to remember.
		var st uint64 = 1
		if rest != "" && p.segs[1].match(rest[strings.LastIndexByte(rest, p.sep)+1:]) {
			st |= 2
		}
		return residual{kind: resNFA, state: st}
	}
	state := p.closure(1)
	for rest != "" {
		seg := rest
		if i := strings.IndexByte(rest, p.sep); i >= 0 {
			seg, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		state = p.step(state, seg)
		if state == 0 {
			return residual{kind: resDead}
		}
	}
	if state&p.tailStar != 0 {
		return residual{kind: resFull}
	}
	return residual{kind: resNFA, state: state}
}

// step advances the NFA state set by one segment, closure included.
func (p *segPattern) step(state uint64, seg string) uint64 {
	final := uint64(1) << len(p.segs)
	var next uint64
	for st := state &^ final; st != 0; st &= st - 1 {
		k := bits.TrailingZeros64(st)
		sg := &p.segs[k]
		if sg.kind == segGlobstar {
			next |= 1 << k
		} else if sg.match(seg) {
			next |= 1 << (k + 1)
		}
	}
	if next == 0 {
		return 0
	}
	return p.closure(next)
}
