package main

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-git/go-git/v6/plumbing/storer"
)

// Revision parsing, as "git help revisions" describes it, for every
// command that takes a revision. resolveRevision is the one entry point;
// the range helpers below build on it.

// maxRevision bounds the length of a revision the parser accepts, and
// maxAncestry the N of ~N and ^N, so a hostile argument costs little.
const (
	maxRevision = 4096
	maxAncestry = 1 << 20
)

// unknownRevision is git's error for an argument that is neither a
// revision nor a path.
func unknownRevision(spec string) error {
	return fatalf("ambiguous argument '%s': unknown revision or path not in the working tree.\n"+
		"Use '--' to separate paths from revisions, like this:\n"+
		"'git <command> [<revision>...] -- [<file>...]'", spec)
}

// errNoRevision marks a revision that names nothing; callers that may
// take the argument as a path instead test for it.
var errNoRevision = errors.New("unknown revision")

// resolveRevision resolves a revision to an object: a full or unique
// short hash; a ref name (HEAD, @, a branch, a tag, a remote-tracking
// branch, refs/...); NAME@{upstream} / @{u}; @{-N}; the suffixes ~N, ^N
// and ^{type} / ^{}; :/regex (the youngest commit whose message
// matches); REV:path (a tree entry) and :path (an index entry). An
// annotated tag name resolves to the tag object; peelCommit goes on to
// the commit. Unknown revisions give git's "ambiguous argument" error.
func resolveRevision(rp *repo, spec string) (plumbing.Hash, error) {
	h, err := resolve(rp, spec)
	if errors.Is(err, errNoRevision) {
		return plumbing.ZeroHash, unknownRevision(spec)
	}
	return h, err
}

// resolveCommitRevision resolves spec and peels it to a commit.
func resolveCommitRevision(rp *repo, spec string) (*object.Commit, error) {
	h, err := resolveRevision(rp, spec)
	if err != nil {
		return nil, err
	}
	c, err := peelCommit(rp, h)
	if err != nil {
		return nil, unknownRevision(spec)
	}
	return c, nil
}

// peelCommit follows tags to the commit they name.
func peelCommit(rp *repo, h plumbing.Hash) (*object.Commit, error) {
	for range 16 {
		o, err := rp.r.Object(plumbing.AnyObject, h)
		if err != nil {
			return nil, err
		}
		switch o := o.(type) {
		case *object.Commit:
			return o, nil
		case *object.Tag:
			h = o.Target
		default:
			return nil, fmt.Errorf("%s is a %s, not a commit", h, o.Type())
		}
	}
	return nil, fmt.Errorf("%s: tag chain too long", h)
}

func resolve(rp *repo, spec string) (plumbing.Hash, error) {
	if spec == "" || len(spec) > maxRevision {
		return plumbing.ZeroHash, errNoRevision
	}
	if strings.HasPrefix(spec, ":/") {
		return searchMessage(rp, spec[2:])
	}
	if strings.HasPrefix(spec, ":") {
		p := spec[1:]
		if len(p) > 2 && p[0] >= '0' && p[0] <= '3' && p[1] == ':' {
			p = p[2:]
		}
		idx, err := rp.r.Storer.Index()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		rel := cleanTreePath(rp, p)
		for _, e := range idx.Entries {
			if e.Name == rel {
				return e.Hash, nil
			}
		}
		return plumbing.ZeroHash, fatalf("path '%s' does not exist (neither on disk nor in the index)", p)
	}
	// REV:path, the colon outside any @{...} or ^{...}.
	depth := 0
	for i := 0; i < len(spec); i++ {
		switch spec[i] {
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case ':':
			if depth == 0 {
				return treePath(rp, spec[:i], spec[i+1:])
			}
		}
	}
	return resolveObject(rp, spec)
}

// cleanTreePath makes a REV:path path relative to the worktree root: a
// leading ./ or ../ is relative to the working directory, as in git.
func cleanTreePath(rp *repo, p string) string {
	if strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || p == "." || p == ".." {
		if r, err := rp.rel(p); err == nil {
			return r
		}
	}
	return strings.Trim(path.Clean("/"+p), "/")
}

// treePath is REV:path.
func treePath(rp *repo, rev, p string) (plumbing.Hash, error) {
	h, err := resolveObject(rp, rev)
	if err != nil {
		return h, err
	}
	c, err := peelCommit(rp, h)
	var t *object.Tree
	if err == nil {
		t, err = c.Tree()
	} else {
		t, err = rp.r.TreeObject(h)
	}
	if err != nil {
		return plumbing.ZeroHash, errNoRevision
	}
	if strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || p == ".." {
		if _, err := rp.rel(p); err != nil {
			return plumbing.ZeroHash, fatalf("'%s' is outside repository at '%s'", p, rp.root)
		}
	}
	rel := cleanTreePath(rp, p)
	if rel == "" {
		return t.Hash, nil
	}
	ent, err := t.FindEntry(rel)
	if err != nil {
		if _, statErr := os.Lstat(filepath.Join(rp.root, filepath.FromSlash(rel))); statErr == nil {
			return plumbing.ZeroHash, fatalf("path '%s' exists on disk, but not in '%s'", p, rev)
		}
		return plumbing.ZeroHash, fatalf("path '%s' does not exist in '%s'", p, rev)
	}
	return ent.Hash, nil
}

// resolveObject handles a revision without a ':' part: the suffixes are
// taken from the end, as git's get_oid_1 does.
func resolveObject(rp *repo, spec string) (plumbing.Hash, error) {
	if spec == "" {
		return plumbing.ZeroHash, errNoRevision
	}
	// ^{type}, ^{} and ^{/regex}.
	if strings.HasSuffix(spec, "}") {
		if i := strings.LastIndex(spec, "^{"); i > 0 {
			h, err := resolveObject(rp, spec[:i])
			if err != nil {
				return h, err
			}
			return peel(rp, h, spec[i+2:len(spec)-1])
		}
	}
	// ~N, ^N, ~ and ^.
	j := len(spec)
	for j > 0 && spec[j-1] >= '0' && spec[j-1] <= '9' {
		j--
	}
	if j > 0 && (spec[j-1] == '~' || spec[j-1] == '^') && j-1 > 0 {
		n := 1
		if j < len(spec) {
			v, err := strconv.Atoi(spec[j:])
			if err != nil || v > maxAncestry {
				return plumbing.ZeroHash, errNoRevision
			}
			n = v
		}
		h, err := resolveObject(rp, spec[:j-1])
		if err != nil {
			return h, err
		}
		c, err := peelCommit(rp, h)
		if err != nil {
			return plumbing.ZeroHash, errNoRevision
		}
		if spec[j-1] == '^' {
			if n == 0 {
				return c.Hash, nil
			}
			if n > len(c.ParentHashes) {
				return plumbing.ZeroHash, errNoRevision
			}
			return c.ParentHashes[n-1], nil
		}
		for range n {
			if len(c.ParentHashes) == 0 {
				return plumbing.ZeroHash, errNoRevision
			}
			if c, err = rp.r.CommitObject(c.ParentHashes[0]); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		return c.Hash, nil
	}
	return resolveBasic(rp, spec)
}

// peel is ^{type}: "" peels tags all the way.
func peel(rp *repo, h plumbing.Hash, typ string) (plumbing.Hash, error) {
	if strings.HasPrefix(typ, "/") {
		re, err := regexp.Compile(typ[1:])
		if err != nil {
			return plumbing.ZeroHash, errNoRevision
		}
		c, err := peelCommit(rp, h)
		if err != nil {
			return plumbing.ZeroHash, errNoRevision
		}
		return youngestMatching(rp, []plumbing.Hash{c.Hash}, re)
	}
	for range 16 {
		o, err := rp.r.Object(plumbing.AnyObject, h)
		if err != nil {
			return plumbing.ZeroHash, errNoRevision
		}
		switch {
		case typ == "object" || o.Type().String() == typ:
			return h, nil
		case o.Type() == plumbing.TagObject:
			h = o.(*object.Tag).Target
		case typ == "":
			return h, nil
		case typ == "tree" && o.Type() == plumbing.CommitObject:
			return o.(*object.Commit).TreeHash, nil
		default:
			return plumbing.ZeroHash, errNoRevision
		}
	}
	return plumbing.ZeroHash, errNoRevision
}

// refRules are git's ref lookup rules for a short name, in order.
var refRules = []string{"%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD"}

// lookupRef finds the ref a short name means, by git's rules; "" if none.
func lookupRef(rp *repo, name string) (plumbing.ReferenceName, plumbing.Hash, bool) {
	for i, rule := range refRules {
		full := fmt.Sprintf(rule, name)
		if i == 0 && !strings.HasPrefix(name, "refs/") && !isPseudoRef(name) {
			continue
		}
		ref, err := storer.ResolveReference(rp.r.Storer, plumbing.ReferenceName(full))
		if err == nil && !ref.Hash().IsZero() {
			return plumbing.ReferenceName(full), ref.Hash(), true
		}
	}
	return "", plumbing.ZeroHash, false
}

// isPseudoRef is git's test for names like HEAD and ORIG_HEAD that live
// at the top of the git directory.
func isPseudoRef(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !(c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return true
}

// resolveBasic handles a name with no suffix: @{...} forms, hashes and
// ref names.
func resolveBasic(rp *repo, spec string) (plumbing.Hash, error) {
	if i := strings.Index(spec, "@{"); i >= 0 && strings.HasSuffix(spec, "}") {
		base, at := spec[:i], spec[i+2:len(spec)-1]
		switch {
		case strings.HasPrefix(at, "-") && i == 0:
			n, err := strconv.Atoi(at[1:])
			if err != nil || n <= 0 {
				return plumbing.ZeroHash, errNoRevision
			}
			name, ok := previousBranch(rp, n)
			if !ok {
				return plumbing.ZeroHash, errNoRevision
			}
			return resolveObject(rp, name)
		case strings.EqualFold(at, "u") || strings.EqualFold(at, "upstream"):
			ref, err := upstream(rp, base)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			r, err := storer.ResolveReference(rp.r.Storer, ref)
			if err != nil {
				return plumbing.ZeroHash, errNoRevision
			}
			return r.Hash(), nil
		case at == "0":
			// NAME@{0} is the ref's current value.
			if base == "" {
				base = "HEAD"
			}
			return resolveObject(rp, base)
		}
		return plumbing.ZeroHash, errNoRevision
	}
	if spec == "@" {
		spec = "HEAD"
	}
	if len(spec) == 40 && isHex(spec) {
		return plumbing.NewHash(spec), nil
	}
	if _, h, ok := lookupRef(rp, spec); ok {
		return h, nil
	}
	if len(spec) >= 4 && len(spec) < 40 && isHex(spec) {
		return shortHash(rp, strings.ToLower(spec))
	}
	return plumbing.ZeroHash, errNoRevision
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// shortHash finds the one object whose hash starts with prefix.
func shortHash(rp *repo, prefix string) (plumbing.Hash, error) {
	type prefixer interface {
		HashesWithPrefix([]byte) ([]plumbing.Hash, error)
	}
	ps, ok := rp.r.Storer.(prefixer)
	if !ok {
		return plumbing.ZeroHash, errNoRevision
	}
	b, err := hex.DecodeString(prefix[:len(prefix)&^1])
	if err != nil {
		return plumbing.ZeroHash, errNoRevision
	}
	hs, err := ps.HashesWithPrefix(b)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var found []plumbing.Hash
	for _, h := range hs {
		if strings.HasPrefix(h.String(), prefix) {
			found = append(found, h)
		}
	}
	if len(found) != 1 {
		if len(found) > 1 {
			return plumbing.ZeroHash, fatalf("short object ID %s is ambiguous", prefix)
		}
		return plumbing.ZeroHash, errNoRevision
	}
	return found[0], nil
}

// upstream is the ref branch NAME (or the current branch, for "")
// tracks, from branch.NAME.remote and branch.NAME.merge.
func upstream(rp *repo, name string) (plumbing.ReferenceName, error) {
	if name == "" || name == "HEAD" || name == "@" {
		cur, attached, err := rp.branch()
		if err != nil {
			return "", err
		}
		if !attached {
			return "", fatalf("HEAD does not point to a branch")
		}
		name = cur
	} else {
		ref, _, ok := lookupRef(rp, name)
		if !ok || !ref.IsBranch() {
			return "", fatalf("no such branch: '%s'", name)
		}
		name = ref.Short()
	}
	remote := configSubValue(rp, "branch", name, "remote")
	merge := configSubValue(rp, "branch", name, "merge")
	if remote == "" || merge == "" {
		return "", fatalf("no upstream configured for branch '%s'", name)
	}
	if remote == "." {
		return plumbing.ReferenceName(merge), nil
	}
	return plumbing.ReferenceName("refs/remotes/" + remote + "/" + strings.TrimPrefix(merge, "refs/heads/")), nil
}

// configSubValue reads section.sub.key: "git -c", then the repository's
// configuration, then the global one.
func configSubValue(rp *repo, section, sub, key string) string {
	section, key = strings.ToLower(section), strings.ToLower(key)
	if v, ok := cliConfig[section+"."+sub+"."+key]; ok {
		return v
	}
	files := []string{filepath.Join(rp.gitDir(), "config")}
	if home, err := os.UserHomeDir(); err == nil {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	for _, f := range files {
		if v, ok := getOption(f, section, sub, key); ok {
			return v
		}
	}
	return ""
}

// maxReflog bounds the bytes of logs/HEAD read for @{-N}.
const maxReflog = 16 << 20

// previousBranch is @{-N}: the branch checked out N switches ago, from
// the "checkout: moving from A to B" entries of HEAD's reflog.
func previousBranch(rp *repo, n int) (string, bool) {
	f, err := os.Open(filepath.Join(rp.gitDir(), "logs", "HEAD"))
	if err != nil {
		return "", false
	}
	defer f.Close()
	var froms []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	read := 0
	for sc.Scan() {
		read += len(sc.Bytes())
		if read > maxReflog {
			break
		}
		_, msg, ok := strings.Cut(sc.Text(), "\t")
		if rest, ok2 := strings.CutPrefix(msg, "checkout: moving from "); ok && ok2 {
			if from, _, ok := strings.Cut(rest, " to "); ok {
				froms = append(froms, from)
			}
		}
	}
	if n > len(froms) {
		return "", false
	}
	return froms[len(froms)-n], true
}

// searchMessage is :/regex: the youngest commit reachable from any ref
// whose message matches ("!" negates with "!-", "!!" is a literal "!").
func searchMessage(rp *repo, pattern string) (plumbing.Hash, error) {
	if strings.HasPrefix(pattern, "!!") {
		pattern = pattern[1:]
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return plumbing.ZeroHash, errNoRevision
	}
	var starts []plumbing.Hash
	refs, err := rp.r.References()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	_ = refs.ForEach(func(r *plumbing.Reference) error {
		if r.Type() == plumbing.HashReference {
			if c, err := peelCommit(rp, r.Hash()); err == nil {
				starts = append(starts, c.Hash)
			}
		}
		return nil
	})
	if h, err := rp.r.ResolveRevision("HEAD"); err == nil {
		starts = append(starts, *h)
	}
	return youngestMatching(rp, starts, re)
}

// youngestMatching walks back from starts, newest first, to the first
// commit whose message matches re.
func youngestMatching(rp *repo, starts []plumbing.Hash, re *regexp.Regexp) (plumbing.Hash, error) {
	w, err := newWalker(rp, starts, nil)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for {
		c, err := w.next()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if c == nil {
			return plumbing.ZeroHash, errNoRevision
		}
		if re.MatchString(c.Message) {
			return c.Hash, nil
		}
	}
}

// revRange is a revision argument of log or diff: a single revision,
// A..B or A...B (either side empty means HEAD), or ^A.
type revRange struct {
	from, to string
	dots     int  // 0: a single revision in to; 2 or 3
	negative bool // ^A
}

// parseRange splits a range argument.
func parseRange(spec string) revRange {
	if strings.HasPrefix(spec, "^") && len(spec) > 1 {
		return revRange{to: spec[1:], negative: true}
	}
	if i := strings.Index(spec, "..."); i >= 0 {
		return revRange{from: orHead(spec[:i]), to: orHead(spec[i+3:]), dots: 3}
	}
	if i := strings.Index(spec, ".."); i >= 0 {
		return revRange{from: orHead(spec[:i]), to: orHead(spec[i+2:]), dots: 2}
	}
	return revRange{to: spec}
}

func orHead(s string) string {
	if s == "" {
		return "HEAD"
	}
	return s
}

// isRevision says whether spec (or each side of a range) resolves.
func isRevision(rp *repo, spec string) bool {
	r := parseRange(spec)
	if r.dots != 0 {
		if _, err := resolve(rp, r.from); err != nil {
			return false
		}
	}
	_, err := resolve(rp, r.to)
	return err == nil
}

// splitRevsPaths separates revisions from paths as git does: before a
// "--", arguments are revisions up to the first that is not one, which
// must then name a file in the worktree (and so must every argument
// after it); an argument that is both needs the "--".
func splitRevsPaths(rp *repo, args []string) (revs, paths []string, err error) {
	for i, a := range args {
		if a == "--" {
			for _, r := range args[:i] {
				if !isRevision(rp, r) {
					return nil, nil, fatalf("bad revision '%s'", r)
				}
			}
			return args[:i], args[i+1:], nil
		}
	}
	for _, a := range args {
		if len(paths) > 0 {
			// After the first path, every argument must be a path.
			if _, err := os.Lstat(filepath.Join(rp.cwd, a)); err != nil {
				return nil, nil, fatalf("%s: no such path in the working tree.\n"+
					"Use 'git <command> -- <path>...' to specify paths that do not exist locally.", a)
			}
			paths = append(paths, a)
			continue
		}
		if isRevision(rp, a) {
			if _, err := os.Lstat(filepath.Join(rp.cwd, a)); err == nil && parseRange(a).dots == 0 {
				return nil, nil, fatalf("ambiguous argument '%s': both revision and filename\n"+
					"Use '--' to separate paths from revisions, like this:\n"+
					"'git <command> [<revision>...] -- [<file>...]'", a)
			}
			revs = append(revs, a)
			continue
		}
		if _, err := os.Lstat(filepath.Join(rp.cwd, a)); err != nil {
			// A revision-like argument that fails gives the revision's
			// own error (a path missing from REV, say).
			if strings.Contains(a, ":") {
				if _, rerr := resolveRevision(rp, a); rerr != nil {
					return nil, nil, rerr
				}
			}
			return nil, nil, unknownRevision(a)
		}
		paths = append(paths, a)
	}
	return revs, paths, nil
}
