package main

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// logOpts are the options git log and git show share.
type logOpts struct {
	format      string // "medium", "oneline", "short", "full", "fuller", "raw", "email"; or a user format
	user        bool   // format is a user format (%-placeholders)
	terminator  bool   // tformat: each entry ends with a newline rather than entries being separated
	abbrev      bool   // --abbrev-commit
	decorate    bool
	dateFmt     string
	diff        diffFormat
	graph       bool
	topo        bool // --topo-order (implied by --graph)
	max, skip   int
	reverse     bool
	all         bool
	firstParent bool
	merges      int // 1: only merges, -1: no merges
	authors     []*regexp.Regexp
	greps       []*regexp.Regexp
	ignoreCase  bool
	since       *time.Time
	until       *time.Time
	rawAuthors  []string
	rawGreps    []string
	showMerges  bool           // git show: a merge's (combined) diff section is shown
	pickaxeS    string         // -S: a change in the number of occurrences
	pickaxeG    *regexp.Regexp // -G: an added or removed line that matches
	pickaxeRE   bool           // --pickaxe-regex: -S is a regular expression
	pickaxeAll  bool           // --pickaxe-all: show every file of a matching commit
}

// parseLogOption takes one option (and maybe its value from rest) and
// returns how many extra arguments it used, or -1 if it is not one.
func (lo *logOpts) parseOption(a string, rest []string) (int, error) {
	val := func(name string) (string, int, bool) {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, 0, true
		}
		if a == name && len(rest) > 0 {
			return rest[0], 1, true
		}
		return "", 0, false
	}
	if lo.diff.flag(a) {
		return 0, nil
	}
	switch {
	case a == "--oneline":
		lo.format, lo.user, lo.terminator, lo.abbrev = "oneline", false, true, true
	case a == "--abbrev-commit":
		lo.abbrev = true
	case a == "--no-abbrev-commit":
		lo.abbrev = false
	case a == "--decorate" || a == "--decorate=short" || a == "--decorate=auto":
		lo.decorate = true
	case a == "--no-decorate" || a == "--decorate=no":
		lo.decorate = false
	case a == "--pickaxe-regex":
		lo.pickaxeRE = true
	case a == "--pickaxe-all":
		lo.pickaxeAll = true
	case strings.HasPrefix(a, "-S") || strings.HasPrefix(a, "-G"):
		v, n := a[2:], 0
		if v == "" {
			if len(rest) == 0 {
				return 0, usagef("error: switch `%c' requires a value", a[1])
			}
			v, n = rest[0], 1
		}
		if a[1] == 'S' {
			lo.pickaxeS = v
			return n, nil
		}
		re, err := regexp.Compile(v)
		if err != nil {
			return 0, fatalf("invalid regex given to -G: '%s'", v)
		}
		lo.pickaxeG = re
		return n, nil
	case a == "--graph":
		lo.graph = true
	case a == "--topo-order":
		lo.topo = true
	case a == "--reverse":
		lo.reverse = true
	case a == "--all":
		lo.all = true
	case a == "--first-parent":
		lo.firstParent = true
	case a == "--merges":
		lo.merges = 1
	case a == "--no-merges":
		lo.merges = -1
	case a == "-i" || a == "--regexp-ignore-case":
		lo.ignoreCase = true
	case a == "--no-color" || a == "--color=never" || a == "--no-notes" || a == "--no-expand-tabs" || a == "--no-mailmap" || a == "--full-diff":
	case len(a) > 1 && a[0] == '-' && isDigits(a[1:]):
		lo.max, _ = strconv.Atoi(a[1:])
	case a == "-n" || a == "--max-count" || strings.HasPrefix(a, "--max-count=") || (strings.HasPrefix(a, "-n") && isDigits(a[2:])):
		v, n, ok := "", 0, false
		if strings.HasPrefix(a, "-n") && len(a) > 2 {
			v, ok = a[2:], true
		} else if v, n, ok = val("--max-count"); !ok {
			v, n, ok = val("-n")
		}
		if !ok {
			return 0, usagef("error: switch `n' requires a value")
		}
		m, err := strconv.Atoi(v)
		if err != nil {
			return 0, fatalf("'%s': not an integer", v)
		}
		lo.max = m
		return n, nil
	case a == "--skip" || strings.HasPrefix(a, "--skip="):
		v, n, ok := val("--skip")
		if !ok {
			return 0, usagef("error: option `skip' requires a value")
		}
		m, err := strconv.Atoi(v)
		if err != nil {
			return 0, fatalf("'%s': not an integer", v)
		}
		lo.skip = m
		return n, nil
	case strings.HasPrefix(a, "--format=") || strings.HasPrefix(a, "--pretty=") || a == "--pretty":
		f := "medium"
		if _, v, ok := strings.Cut(a, "="); ok {
			f = v
		}
		return 0, lo.setFormat(f)
	case a == "--author" || strings.HasPrefix(a, "--author="):
		v, n, ok := val("--author")
		if !ok {
			return 0, usagef("error: option `author' requires a value")
		}
		lo.rawAuthors = append(lo.rawAuthors, v)
		return n, nil
	case a == "--grep" || strings.HasPrefix(a, "--grep="):
		v, n, ok := val("--grep")
		if !ok {
			return 0, usagef("error: option `grep' requires a value")
		}
		lo.rawGreps = append(lo.rawGreps, v)
		return n, nil
	case strings.HasPrefix(a, "--date="):
		lo.dateFmt = strings.TrimPrefix(a, "--date=")
		switch lo.dateFmt {
		case "default", "iso", "iso8601", "iso-strict", "iso8601-strict", "short", "raw", "unix", "rfc", "rfc2822", "relative":
		default:
			return 0, fatalf("unknown date format %s", lo.dateFmt)
		}
	case strings.HasPrefix(a, "--since=") || strings.HasPrefix(a, "--after=") || strings.HasPrefix(a, "--until=") || strings.HasPrefix(a, "--before="):
		name, v, _ := strings.Cut(a, "=")
		t, err := parseApproxDate(v)
		if err != nil {
			return 0, fatalf("invalid date '%s'", v)
		}
		if name == "--since" || name == "--after" {
			lo.since = &t
		} else {
			lo.until = &t
		}
	default:
		return -1, nil
	}
	return 0, nil
}

// parseApproxDate accepts the absolute dates scripts give --since and
// --until: whatever GIT_*_DATE takes, and YYYY-MM-DD, which (as in
// git's approxidate) keeps the current time of day.
func parseApproxDate(s string) (time.Time, error) {
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		now := time.Now()
		return time.Date(t.Year(), t.Month(), t.Day(), now.Hour(), now.Minute(), now.Second(), 0, time.Local), nil
	}
	return parseDate(s)
}

func (lo *logOpts) setFormat(f string) error {
	lo.user, lo.terminator = false, false
	switch {
	case f == "oneline":
		lo.format, lo.terminator = f, true
	case f == "short" || f == "medium" || f == "full" || f == "fuller" || f == "raw":
		lo.format = f
	case strings.HasPrefix(f, "format:"):
		lo.format, lo.user = strings.TrimPrefix(f, "format:"), true
	case strings.HasPrefix(f, "tformat:"):
		lo.format, lo.user, lo.terminator = strings.TrimPrefix(f, "tformat:"), true, true
	case strings.Contains(f, "%") || f == "":
		lo.format, lo.user, lo.terminator = f, true, true
	default:
		return fatalf("invalid --pretty format: %s", f)
	}
	return nil
}

// compile turns --author and --grep into regular expressions.
func (lo *logOpts) compile() error {
	flags := ""
	if lo.ignoreCase {
		flags = "(?i)"
	}
	for _, pats := range []struct {
		raw []string
		out *[]*regexp.Regexp
	}{{lo.rawAuthors, &lo.authors}, {lo.rawGreps, &lo.greps}} {
		for _, p := range pats.raw {
			re, err := regexp.Compile(flags + p)
			if err != nil {
				return fatalf("command line, '%s': %v", p, err)
			}
			*pats.out = append(*pats.out, re)
		}
	}
	return nil
}

// wanted applies the commit filters.
func (lo *logOpts) wanted(c *object.Commit) bool {
	if lo.merges == 1 && len(c.ParentHashes) < 2 || lo.merges == -1 && len(c.ParentHashes) > 1 {
		return false
	}
	if lo.since != nil && c.Committer.When.Before(*lo.since) || lo.until != nil && c.Committer.When.After(*lo.until) {
		return false
	}
	if len(lo.authors) > 0 && !slices.ContainsFunc(lo.authors, func(re *regexp.Regexp) bool {
		return re.MatchString(c.Author.Name + " <" + c.Author.Email + ">")
	}) {
		return false
	}
	if len(lo.greps) > 0 && !slices.ContainsFunc(lo.greps, func(re *regexp.Regexp) bool { return re.MatchString(c.Message) }) {
		return false
	}
	return true
}

// cmdLog: git log [options] [<revision-range>] [[--] <path>...].
func cmdLog(e *env, args []string) error {
	lo := &logOpts{format: "medium", max: -1}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			n, err := lo.parseOption(a, args[i+1:])
			if err != nil {
				return err
			}
			if n < 0 {
				return fatalf("unrecognized argument: %s", a)
			}
			i += n
			continue
		}
		rest = append(rest, a)
	}
	if err := lo.compile(); err != nil {
		return err
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	revs, paths, err := splitRevsPaths(rp, rest)
	if err != nil {
		return err
	}
	var starts, excludes []plumbing.Hash
	for _, r := range revs {
		rr := parseRange(r)
		to, err := resolveCommitRevision(rp, rr.to)
		if err != nil {
			return err
		}
		if rr.negative {
			excludes = append(excludes, to.Hash)
			continue
		}
		starts = append(starts, to.Hash)
		if rr.dots == 0 {
			continue
		}
		from, err := resolveCommitRevision(rp, rr.from)
		if err != nil {
			return err
		}
		if rr.dots == 2 {
			excludes = append(excludes, from.Hash)
			continue
		}
		// A...B: commits in either but not both; git queues A before B
		// (the order commits of equal dates come out in).
		starts[len(starts)-1] = from.Hash
		starts = append(starts, to.Hash)
		bases, err := from.MergeBase(to)
		if err != nil {
			return err
		}
		for _, b := range bases {
			excludes = append(excludes, b.Hash)
		}
	}
	if lo.all {
		refs, err := allRefCommits(rp)
		if err != nil {
			return err
		}
		starts = append(starts, refs...)
	}
	if len(revs) == 0 && !lo.all {
		head, err := rp.head()
		if err != nil {
			return err
		}
		if head == nil {
			branch, _, _ := rp.branch()
			return fatalf("your current branch '%s' does not have any commits yet", branch)
		}
		starts = append(starts, head.Hash)
	}
	specs, err := pathspecs(rp, paths)
	if err != nil {
		return err
	}
	deco, err := decorations(rp, lo.decorate || strings.Contains(lo.format, "%d") || strings.Contains(lo.format, "%D"))
	if err != nil {
		return err
	}
	commits, shown, err := selectCommits(rp, lo, starts, excludes, specs)
	if err != nil {
		return err
	}
	p := &printer{w: e.stdout, rp: rp, lo: lo, deco: deco, specs: specs}
	if lo.graph {
		p.graph = newGraph(shown, lo.firstParent)
	}
	for _, c := range commits {
		if err := p.commit(c); err != nil {
			return err
		}
	}
	return p.finish()
}

// allRefCommits is --all: every ref's commit, and HEAD.
func allRefCommits(rp *repo) ([]plumbing.Hash, error) {
	var out []plumbing.Hash
	refs, err := rp.r.References()
	if err != nil {
		return nil, err
	}
	err = refs.ForEach(func(r *plumbing.Reference) error {
		if r.Type() != plumbing.HashReference || r.Name() == plumbing.HEAD {
			return nil
		}
		if c, err := peelCommit(rp, r.Hash()); err == nil {
			out = append(out, c.Hash)
		}
		return nil
	})
	if h, err := rp.head(); err == nil && h != nil {
		out = append(out, h.Hash)
	}
	return out, err
}

// pathspecs turns command-line paths into worktree paths.
func pathspecs(rp *repo, paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		rel, err := rp.rel(p)
		if err != nil {
			return nil, err
		}
		out = append(out, rel)
	}
	return out, nil
}

// matchSpec says whether a worktree path is under one of specs (all
// paths match no specs).
func matchSpec(specs []string, p string) bool {
	if len(specs) == 0 {
		return true
	}
	for _, s := range specs {
		if s == "." || s == p || strings.HasPrefix(p, s+"/") {
			return true
		}
		if strings.ContainsAny(s, "*?[") {
			if globMatch(s, p) {
				return true
			}
		}
	}
	return false
}

// filterChanges keeps the changes under specs.
func filterChanges(changes []fileChange, specs []string) []fileChange {
	if len(specs) == 0 {
		return changes
	}
	var keep []fileChange
	for _, c := range changes {
		if matchSpec(specs, c.path) {
			keep = append(keep, c)
		}
	}
	return keep
}

// isShallow says whether h is a shallow clone's boundary commit, which
// git shows as if it had no parents (they are not in the repository).
func (rp *repo) isShallow(h plumbing.Hash) bool {
	shallow, err := rp.r.Storer.Shallow()
	return err == nil && slices.Contains(shallow, h)
}

// commitChanges is what a commit changed against its first parent (a
// shallow boundary commit against nothing, as git shows it).
func commitChanges(rp *repo, c *object.Commit, parent int) ([]fileChange, error) {
	var p *object.Commit
	if parent < len(c.ParentHashes) && !rp.isShallow(c.Hash) {
		var err error
		if p, err = rp.r.CommitObject(c.ParentHashes[parent]); err != nil {
			return nil, err
		}
	}
	a, err := treeSnapshot(rp, p)
	if err != nil {
		return nil, err
	}
	b, err := treeSnapshot(rp, c)
	if err != nil {
		return nil, err
	}
	return compare(a, b), nil
}

// selectCommits walks the history and applies the filters, -n, --skip
// and --reverse, in git's order (topological, second parents first,
// for --graph).
func selectCommits(rp *repo, lo *logOpts, starts, excludes []plumbing.Hash, specs []string) ([]*object.Commit, map[plumbing.Hash]bool, error) {
	w, err := newWalker(rp, starts, excludes)
	if err != nil {
		return nil, nil, err
	}
	w.firstParent = lo.firstParent
	var list []*object.Commit
	for {
		c, err := w.next()
		if err != nil {
			return nil, nil, err
		}
		if c == nil {
			break
		}
		if len(specs) > 0 {
			touched, err := touches(rp, c, specs)
			if err != nil {
				return nil, nil, err
			}
			if !touched {
				continue
			}
		}
		if lo.diff.filter != "" {
			// --diff-filter also selects the commits with such a change.
			if len(c.ParentHashes) > 1 {
				continue
			}
			ch, err := commitChanges(rp, c, 0)
			if err != nil {
				return nil, nil, err
			}
			ch = filterChanges(ch, specs)
			if !lo.diff.noRenames {
				ch = detectRenames(ch)
			}
			if len(filterStatus(ch, lo.diff.filter)) == 0 {
				continue
			}
		}
		if lo.pickaxeS != "" || lo.pickaxeG != nil {
			hit, err := lo.pickaxeHits(rp, c, specs)
			if err != nil {
				return nil, nil, err
			}
			if len(hit) == 0 {
				continue
			}
		}
		if lo.wanted(c) {
			list = append(list, c)
		}
	}
	// Every selected commit is one the graph draws edges to, even
	// past -n or --skip, as git's graph does.
	shown := make(map[plumbing.Hash]bool, len(list))
	for _, c := range list {
		shown[c.Hash] = true
	}
	if lo.graph || lo.topo {
		list = topoSort(list)
	}
	if lo.skip > 0 {
		list = list[min(lo.skip, len(list)):]
	}
	if lo.max >= 0 && lo.max < len(list) {
		list = list[:lo.max]
	}
	if lo.reverse {
		slices.Reverse(list)
	}
	return list, shown, nil
}

// touches says whether c changes a path under specs: against its only
// parent, or, for a merge, against every parent (a merge that takes a
// side's version unchanged is not shown, as in git's default history
// simplification).
func touches(rp *repo, c *object.Commit, specs []string) (bool, error) {
	n := max(len(c.ParentHashes), 1)
	for i := range n {
		ch, err := commitChanges(rp, c, i)
		if err != nil {
			return false, err
		}
		if len(filterChanges(ch, specs)) == 0 {
			return false, nil
		}
	}
	return true, nil
}

// topoSort is git's sort_in_topological_order in graph order: children
// before parents, tips in list order, a merge's last parent first.
func topoSort(list []*object.Commit) []*object.Commit {
	in := map[plumbing.Hash]int{}
	byHash := map[plumbing.Hash]*object.Commit{}
	for _, c := range list {
		in[c.Hash] = 1
		byHash[c.Hash] = c
	}
	for _, c := range list {
		for _, p := range c.ParentHashes {
			if in[p] > 0 {
				in[p]++
			}
		}
	}
	var stack []*object.Commit
	for i := len(list) - 1; i >= 0; i-- {
		if in[list[i].Hash] == 1 {
			stack = append(stack, list[i])
		}
	}
	out := make([]*object.Commit, 0, len(list))
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range c.ParentHashes {
			if in[p] == 0 {
				continue
			}
			in[p]--
			if in[p] == 1 {
				stack = append(stack, byHash[p])
			}
		}
		in[c.Hash] = 0
		out = append(out, c)
	}
	return out
}

// decorations maps commits (and tags) to the ref names git log
// --decorate prints, in git's order: HEAD first, then the refs in
// reverse name order.
func decorations(rp *repo, want bool) (map[plumbing.Hash][]string, error) {
	out := map[plumbing.Hash][]string{}
	if !want {
		return out, nil
	}
	refs, err := rp.r.References()
	if err != nil {
		return nil, err
	}
	var all []*plumbing.Reference
	_ = refs.ForEach(func(r *plumbing.Reference) error {
		if r.Name() != plumbing.HEAD {
			all = append(all, r)
		}
		return nil
	})
	slices.SortFunc(all, func(a, b *plumbing.Reference) int { return strings.Compare(b.Name().String(), a.Name().String()) })
	cur, attached, err := rp.branch()
	if err != nil {
		return nil, err
	}
	if h, err := rp.head(); err == nil && h != nil {
		if attached {
			out[h.Hash] = append(out[h.Hash], "HEAD -> "+cur)
		} else {
			out[h.Hash] = append(out[h.Hash], "HEAD")
		}
	}
	for _, r := range all {
		var ref *plumbing.Reference = r
		if r.Type() == plumbing.SymbolicReference {
			t, err := rp.r.Reference(r.Name(), true)
			if err != nil {
				continue
			}
			ref = t
		}
		name := r.Name()
		label := ""
		switch {
		case name.IsBranch():
			if attached && name.Short() == cur {
				continue
			}
			label = name.Short()
		case name.IsTag():
			label = "tag: " + name.Short()
		case name.IsRemote():
			label = name.Short()
		default:
			label = name.String()
		}
		h := ref.Hash()
		if c, err := peelCommit(rp, h); err == nil {
			h = c.Hash
		}
		out[h] = append(out[h], label)
	}
	return out, nil
}

// printer writes log entries with git's separators.
type printer struct {
	w         io.Writer
	rp        *repo
	lo        *logOpts
	deco      map[plumbing.Hash][]string
	specs     []string
	shown     bool
	missingNL bool
	graph     *graph
}

// commit writes one entry: the header and message in the chosen format
// and the diff formats asked for.
func (p *printer) commit(c *object.Commit) error {
	lo := p.lo
	var ge graphEntry
	ge.separator = p.shown && !lo.terminator
	ge.header = p.header(c)
	emptyFormat := lo.user && lo.format == ""
	ge.terminator = lo.terminator && !emptyFormat
	missingNL := !strings.HasSuffix(ge.header, "\n")
	var d bytes.Buffer
	if lo.diff.any() && len(c.ParentHashes) > 1 && lo.showMerges {
		// A clean merge's combined diff is empty, but git show still
		// writes its separator; --stat is against the first parent.
		d.WriteByte('\n')
		if f := (diffFormat{stat: lo.diff.stat, shortstat: lo.diff.shortstat, numstat: lo.diff.numstat}); f.any() {
			changes, err := commitChanges(p.rp, c, 0)
			if err != nil {
				return err
			}
			if err := writeDiff(&d, f, filterChanges(changes, p.specs)); err != nil {
				return err
			}
		}
	}
	if lo.diff.any() && len(c.ParentHashes) <= 1 {
		changes, err := commitChanges(p.rp, c, 0)
		if err != nil {
			return err
		}
		changes = filterChanges(changes, p.specs)
		if (lo.pickaxeS != "" || lo.pickaxeG != nil) && !lo.pickaxeAll {
			if changes, err = lo.pickaxeFilter(changes); err != nil {
				return err
			}
		}
		if len(changes) > 0 {
			if lo.format != "oneline" && !emptyFormat {
				if lo.diff.patch && lo.diff.stat {
					d.WriteString("---")
				}
				d.WriteByte('\n')
			}
			if err := writeDiff(&d, lo.diff, changes); err != nil {
				return err
			}
		}
	}
	ge.diff = d.Bytes()
	p.shown = true
	if p.graph != nil {
		err := p.graph.write(p.w, c, ge)
		p.missingNL = false
		return err
	}
	var b bytes.Buffer
	if ge.separator {
		// A blank line after an entry that ended its line; for a
		// format: entry, which did not, the end of its line.
		b.WriteByte('\n')
	}
	b.WriteString(ge.header)
	p.missingNL = missingNL
	if ge.terminator {
		b.WriteByte('\n')
		p.missingNL = false
	}
	if len(ge.diff) > 0 {
		b.Write(ge.diff)
		p.missingNL = false
	}
	_, err := p.w.Write(b.Bytes())
	return err
}

// finish ends the output: a format: (not tformat:) entry has no final
// newline, as in git.
func (p *printer) finish() error { return nil }

func (p *printer) hash(h plumbing.Hash) string {
	if p.lo.abbrev {
		return short(h)
	}
	return h.String()
}

func (p *printer) decoration(h plumbing.Hash, parens bool) string {
	d := p.deco[h]
	if len(d) == 0 {
		return ""
	}
	if parens {
		return " (" + strings.Join(d, ", ") + ")"
	}
	return strings.Join(d, ", ")
}

// header is the commit's header and message in the chosen format.
func (p *printer) header(c *object.Commit) string {
	lo := p.lo
	if lo.user {
		return expandFormat(lo.format, c, p)
	}
	subject := subjectOf(c.Message)
	var deco string
	if lo.decorate {
		deco = p.decoration(c.Hash, true)
	}
	if lo.format == "oneline" {
		return p.hash(c.Hash) + deco + " " + subject
	}
	var b strings.Builder
	fmt.Fprintf(&b, "commit %s%s\n", p.hash(c.Hash), deco)
	if lo.format == "raw" {
		fmt.Fprintf(&b, "tree %s\n", c.TreeHash)
		for _, ph := range c.ParentHashes {
			fmt.Fprintf(&b, "parent %s\n", ph)
		}
		fmt.Fprintf(&b, "author %s\ncommitter %s\n\n", rawSig(c.Author), rawSig(c.Committer))
	} else {
		if len(c.ParentHashes) > 1 {
			var ps []string
			for _, ph := range c.ParentHashes {
				ps = append(ps, short(ph))
			}
			fmt.Fprintf(&b, "Merge: %s\n", strings.Join(ps, " "))
		}
		switch lo.format {
		case "short":
			fmt.Fprintf(&b, "Author: %s <%s>\n\n", c.Author.Name, c.Author.Email)
		case "full":
			fmt.Fprintf(&b, "Author: %s <%s>\nCommit: %s <%s>\n\n", c.Author.Name, c.Author.Email, c.Committer.Name, c.Committer.Email)
		case "fuller":
			fmt.Fprintf(&b, "Author:     %s <%s>\nAuthorDate: %s\nCommit:     %s <%s>\nCommitDate: %s\n\n",
				c.Author.Name, c.Author.Email, p.date(c.Author), c.Committer.Name, c.Committer.Email, p.date(c.Committer))
		default:
			fmt.Fprintf(&b, "Author: %s <%s>\nDate:   %s\n\n", c.Author.Name, c.Author.Email, p.date(c.Author))
		}
	}
	msg := strings.TrimRight(c.Message, "\n")
	if lo.format == "short" {
		msg = subject
	}
	for _, l := range strings.Split(msg, "\n") {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	return b.String()
}

func rawSig(s object.Signature) string {
	return fmt.Sprintf("%s <%s> %d %s", s.Name, s.Email, s.When.Unix(), s.When.Format("-0700"))
}

// subjectOf is a message's first paragraph on one line, as git's %s.
func subjectOf(msg string) string {
	para, _, _ := strings.Cut(strings.TrimLeft(msg, "\n"), "\n\n")
	lines := strings.Split(strings.TrimRight(para, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, " ")
}

// bodyOf is a message after its first paragraph, as git's %b.
func bodyOf(msg string) string {
	_, body, _ := strings.Cut(strings.TrimLeft(msg, "\n"), "\n\n")
	return strings.TrimLeft(body, "\n")
}

func (p *printer) date(s object.Signature) string { return formatDate(s, p.lo.dateFmt) }

// formatDate is a signature's date in one of git's --date formats.
func formatDate(s object.Signature, f string) string {
	switch f {
	case "iso", "iso8601":
		return s.When.Format("2006-01-02 15:04:05 -0700")
	case "iso-strict", "iso8601-strict":
		return s.When.Format("2006-01-02T15:04:05-07:00")
	case "short":
		return s.When.Format("2006-01-02")
	case "raw":
		return fmt.Sprintf("%d %s", s.When.Unix(), s.When.Format("-0700"))
	case "unix":
		return strconv.FormatInt(s.When.Unix(), 10)
	case "rfc", "rfc2822":
		return s.When.Format("Mon, 2 Jan 2006 15:04:05 -0700")
	case "relative":
		return relativeDate(s.When, time.Now())
	}
	return gitDate(s)
}

// relativeDate is git's "N units ago", with its rounding.
func relativeDate(t, now time.Time) string {
	if t.After(now) {
		return "in the future"
	}
	n := func(v int64, one, many string) string {
		if v == 1 {
			return "1 " + one
		}
		return strconv.FormatInt(v, 10) + " " + many
	}
	diff := int64(now.Sub(t) / time.Second)
	if diff < 90 {
		return n(diff, "second", "seconds") + " ago"
	}
	diff = (diff + 30) / 60
	if diff < 90 {
		return n(diff, "minute", "minutes") + " ago"
	}
	diff = (diff + 30) / 60
	if diff < 36 {
		return n(diff, "hour", "hours") + " ago"
	}
	diff = (diff + 12) / 24
	if diff < 14 {
		return n(diff, "day", "days") + " ago"
	}
	if diff < 70 {
		return n((diff+3)/7, "week", "weeks") + " ago"
	}
	if diff < 365 {
		return n((diff+15)/30, "month", "months") + " ago"
	}
	if diff < 1825 {
		total := (diff*12*2 + 365) / (365 * 2)
		years, months := total/12, total%12
		if months > 0 {
			return n(years, "year", "years") + ", " + n(months, "month", "months") + " ago"
		}
		return n(years, "year", "years") + " ago"
	}
	return n((diff+183)/365, "year", "years") + " ago"
}

// gitDate is git's default date format, in the signature's own zone.
func gitDate(s object.Signature) string { return s.When.Format("Mon Jan 2 15:04:05 2006 -0700") }

// expandFormat expands a --format string's placeholders for c.
func expandFormat(f string, c *object.Commit, p *printer) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		rest := f[i:]
		switch {
		case rest[0] == 'H':
			b.WriteString(c.Hash.String())
		case rest[0] == 'h':
			b.WriteString(short(c.Hash))
		case rest[0] == 'T':
			b.WriteString(c.TreeHash.String())
		case rest[0] == 't':
			b.WriteString(short(c.TreeHash))
		case rest[0] == 'P' || rest[0] == 'p':
			var ps []string
			for _, ph := range c.ParentHashes {
				if rest[0] == 'P' {
					ps = append(ps, ph.String())
				} else {
					ps = append(ps, short(ph))
				}
			}
			b.WriteString(strings.Join(ps, " "))
		case rest[0] == 's':
			b.WriteString(subjectOf(c.Message))
		case rest[0] == 'b':
			b.WriteString(bodyOf(c.Message))
		case rest[0] == 'B':
			b.WriteString(c.Message)
		case rest[0] == 'n':
			b.WriteByte('\n')
		case rest[0] == '%':
			b.WriteByte('%')
		case rest[0] == 'd' && p != nil:
			b.WriteString(p.decoration(c.Hash, true))
		case rest[0] == 'D' && p != nil:
			b.WriteString(p.decoration(c.Hash, false))
		case strings.HasPrefix(rest, "x") && len(rest) >= 3 && isHex(rest[1:3]):
			v, _ := strconv.ParseUint(rest[1:3], 16, 8)
			b.WriteByte(byte(v))
			i += 2
		case strings.HasPrefix(rest, "C("):
			if j := strings.IndexByte(rest, ')'); j > 0 {
				i += j
			}
		case strings.HasPrefix(rest, "Creset") || strings.HasPrefix(rest, "Cgreen") || strings.HasPrefix(rest, "Cblue"):
			i += 5
		case strings.HasPrefix(rest, "Cred"):
			i += 3
		case len(rest) >= 2 && (rest[0] == 'a' || rest[0] == 'c'):
			sig := c.Author
			if rest[0] == 'c' {
				sig = c.Committer
			}
			if s, ok := sigField(sig, rest[1], p); ok {
				b.WriteString(s)
			} else {
				b.WriteString("%" + rest[:2])
			}
			i++
		default:
			b.WriteByte('%')
			b.WriteByte(rest[0])
		}
	}
	return b.String()
}

// sigField is %aX / %cX.
func sigField(sig object.Signature, x byte, p *printer) (string, bool) {
	switch x {
	case 'n', 'N':
		return sig.Name, true
	case 'e', 'E':
		return sig.Email, true
	case 'l', 'L':
		local, _, _ := strings.Cut(sig.Email, "@")
		return local, true
	case 'd':
		if p != nil {
			return p.date(sig), true
		}
		return gitDate(sig), true
	case 'D':
		return sig.When.Format("Mon, 2 Jan 2006 15:04:05 -0700"), true
	case 't':
		return strconv.FormatInt(sig.When.Unix(), 10), true
	case 'i':
		return sig.When.Format("2006-01-02 15:04:05 -0700"), true
	case 'I':
		return sig.When.Format("2006-01-02T15:04:05-07:00"), true
	case 's':
		return sig.When.Format("2006-01-02"), true
	case 'r':
		return relativeDate(sig.When, time.Now()), true
	}
	return "", false
}

// pickaxeHits are the changes of c (a non-merge) that -S or -G select.
func (lo *logOpts) pickaxeHits(rp *repo, c *object.Commit, specs []string) ([]fileChange, error) {
	if len(c.ParentHashes) > 1 {
		return nil, nil
	}
	changes, err := commitChanges(rp, c, 0)
	if err != nil {
		return nil, err
	}
	return lo.pickaxeFilter(filterChanges(changes, specs))
}

// pickaxeFilter keeps the changes -S (a different number of
// occurrences) or -G (an added or removed line that matches) selects.
func (lo *logOpts) pickaxeFilter(changes []fileChange) ([]fileChange, error) {
	var sRE *regexp.Regexp
	if lo.pickaxeS != "" && lo.pickaxeRE {
		re, err := regexp.Compile(lo.pickaxeS)
		if err != nil {
			return nil, fatalf("invalid regex given to -S: '%s'", lo.pickaxeS)
		}
		sRE = re
	}
	count := func(data []byte) int {
		if sRE != nil {
			return len(sRE.FindAllIndex(data, -1))
		}
		return strings.Count(string(data), lo.pickaxeS)
	}
	var keep []fileChange
	for _, ch := range changes {
		var a, b []byte
		var err error
		if ch.from != nil {
			if a, err = ch.from.load(); err != nil {
				return nil, err
			}
		}
		if ch.to != nil {
			if b, err = ch.to.load(); err != nil {
				return nil, err
			}
		}
		hit := false
		if lo.pickaxeS != "" {
			hit = count(a) != count(b)
		} else if !isBinary(a) && !isBinary(b) {
			for _, o := range lineOps(string(a), string(b)) {
				if o.kind != ' ' && lo.pickaxeG.MatchString(strings.TrimSuffix(o.line, "\n")) {
					hit = true
					break
				}
			}
		}
		if hit {
			keep = append(keep, ch)
		}
	}
	return keep, nil
}
