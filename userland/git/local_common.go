package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/filemode"
	"github.com/go-git/go-git/v6/plumbing/format/index"
)

// optionError is git's error for an option a command does not know:
// the message, then the command's usage, status 129.
func optionError(cmd, a string) error {
	what := "option `" + strings.TrimPrefix(strings.SplitN(a, "=", 2)[0], "--") + "'"
	switch {
	case cmd == "blame" || cmd == "shortlog" || len(a) < 2:
		// blame parses revision options itself and names the option
		// whole.
		what = "option `" + a + "'"
	case !strings.HasPrefix(a, "--"):
		what = "switch `" + a[1:2] + "'"
	}
	return usagef("error: unknown %s\n%s", what, strings.TrimSuffix(usageTexts[cmd], "\n"))
}

// specMatcher matches worktree paths against pathspecs: a path, a
// directory (everything under it), "." (everything), or a glob.
type specMatcher struct {
	specs   []string
	matched []bool
}

func newSpecMatcher(specs []string) *specMatcher {
	return &specMatcher{specs: specs, matched: make([]bool, len(specs))}
}

func (m *specMatcher) match(p string) bool {
	if len(m.specs) == 0 {
		return true
	}
	hit := false
	for i, s := range m.specs {
		ok := s == "." || s == "" || s == p || strings.HasPrefix(p, s+"/")
		if !ok && strings.ContainsAny(s, "*?[") {
			ok = globMatch(s, p)
		}
		if ok {
			m.matched[i] = true
			hit = true
		}
	}
	return hit
}

// unmatched is the first pathspec that matched nothing, or -1.
func (m *specMatcher) unmatched() int {
	for i, ok := range m.matched {
		if !ok {
			return i
		}
	}
	return -1
}

// writeWorktreeFile writes a file of a snapshot into the worktree, as a
// checkout does (a symlink for a link entry).
func writeWorktreeFile(rp *repo, p string, ent entry) error {
	data, err := ent.load()
	if err != nil {
		return err
	}
	full := filepath.Join(rp.root, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	_ = os.Remove(full)
	if ent.mode == filemode.Symlink {
		return os.Symlink(string(data), full)
	}
	perm := os.FileMode(0o644)
	if ent.mode == filemode.Executable {
		perm = 0o755
	}
	return os.WriteFile(full, data, perm)
}

// removeWorktreeFile deletes a file and the directories it leaves empty.
func removeWorktreeFile(rp *repo, p string) error {
	full := filepath.Join(rp.root, filepath.FromSlash(p))
	if err := os.Remove(full); err != nil && !os.IsNotExist(err) {
		return err
	}
	for d := filepath.Dir(full); d != rp.root && strings.HasPrefix(d, rp.root); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
	return nil
}

// setIndexEntries replaces the index entries of paths with the given
// snapshot's (removing those it lacks) and writes the index. The new
// entries carry no stat data, so git and go-git re-read those files.
func setIndexEntries(rp *repo, paths []string, src snapshot) error {
	idx, err := rp.r.Storer.Index()
	if err != nil {
		return err
	}
	for _, p := range paths {
		ent, ok := src[p]
		i := slices.IndexFunc(idx.Entries, func(e *index.Entry) bool { return e.Name == p })
		switch {
		case !ok && i >= 0:
			idx.Entries = slices.Delete(idx.Entries, i, i+1)
		case ok && i >= 0:
			if idx.Entries[i].Hash != ent.hash || idx.Entries[i].Mode != ent.mode {
				idx.Entries[i] = &index.Entry{Name: p, Hash: ent.hash, Mode: ent.mode}
			}
		case ok:
			idx.Entries = append(idx.Entries, &index.Entry{Name: p, Hash: ent.hash, Mode: ent.mode})
		}
	}
	slices.SortFunc(idx.Entries, func(a, b *index.Entry) int { return strings.Compare(a.Name, b.Name) })
	return rp.r.Storer.SetIndex(idx)
}

// unionPaths lists the paths of the snapshots that match m, sorted.
func unionPaths(m *specMatcher, snaps ...snapshot) []string {
	seen := map[string]bool{}
	for _, s := range snaps {
		for p := range s {
			if m.match(p) {
				seen[p] = true
			}
		}
	}
	return slices.Sorted(mapKeys(seen))
}

// writeOrigHead records the old HEAD in ORIG_HEAD, as reset does.
func writeOrigHead(rp *repo, h plumbing.Hash) error {
	return os.WriteFile(filepath.Join(rp.gitDir(), "ORIG_HEAD"), []byte(h.String()+"\n"), 0o644)
}

// globMatch is git's pathspec glob: fnmatch without FNM_PATHNAME, so
// "*" and "?" match "/" too, and a match of a leading directory counts.
func globMatch(pattern, name string) bool { return globRegexp(pattern, "(/.*)?$").MatchString(name) }

// wildMatch matches a whole name against a glob, as tag -l does.
func wildMatch(pattern, name string) bool { return globRegexp(pattern, "$").MatchString(name) }

// neverMatch is the pattern of a glob that does not compile.
var neverMatch = regexp.MustCompile(`^\b\B$`)

func globRegexp(pattern, tail string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			j := strings.IndexByte(pattern[i+1:], ']')
			if j < 0 {
				b.WriteString(regexp.QuoteMeta("["))
				continue
			}
			class := pattern[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(tail)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return neverMatch
	}
	return re
}
