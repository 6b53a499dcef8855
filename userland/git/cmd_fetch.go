package main

import (
	gocontext "context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/config"
	"github.com/go-git/go-git/v6/plumbing"
)

// summaryWidth is git's column for "[new branch]" and "a..b": twice the
// abbreviated hash length plus three.
const summaryWidth = 2*7 + 3

// refChange is one local ref a fetch created, moved or pruned.
type refChange struct {
	local    plumbing.ReferenceName
	old, new plumbing.Hash // zero when absent
}

// refSnapshot maps every direct ref to its hash.
func refSnapshot(rp *repo) (map[plumbing.ReferenceName]plumbing.Hash, error) {
	iter, err := rp.r.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	m := map[plumbing.ReferenceName]plumbing.Hash{}
	err = iter.ForEach(func(r *plumbing.Reference) error {
		if r.Type() == plumbing.HashReference {
			m[r.Name()] = r.Hash()
		}
		return nil
	})
	return m, err
}

// fetchSpec is what one fetch asks for.
type fetchSpec struct {
	remote string // configured name, or "" for a URL
	url    string
	specs  []config.RefSpec
	tags   plumbing.TagMode
	prune  bool
	depth  int
	force  bool
}

// fetchRefs runs a fetch and returns the refs it changed. A fetch that
// changed nothing is not an error.
func fetchRefs(rp *repo, f fetchSpec) ([]refChange, []fetchLine, error) {
	if err := checkScheme(f.url); err != nil {
		return nil, nil, err
	}
	before, err := refSnapshot(rp)
	if err != nil {
		return nil, nil, err
	}
	var symbolic []*plumbing.Reference
	if iter, err := rp.r.Storer.IterReferences(); err == nil {
		_ = iter.ForEach(func(r *plumbing.Reference) error {
			if r.Type() == plumbing.SymbolicReference && r.Name().IsRemote() {
				symbolic = append(symbolic, r)
			}
			return nil
		})
	}
	name := f.remote
	if name == "" {
		name = "anonymous"
	}
	u := f.url
	if !isURL(u) {
		if localPath(u) == "" {
			return nil, nil, transportError(u, errRepoNotFound)
		}
		abs, err := filepath.Abs(u)
		if err != nil {
			return nil, nil, err
		}
		u = abs
	}
	rem := git.NewRemote(rp.r.Storer, &config.RemoteConfig{Name: name, URLs: []string{u}, Fetch: f.specs})
	err = rem.FetchContext(gocontext.Background(), &git.FetchOptions{
		RemoteName:    name,
		RefSpecs:      f.specs,
		Tags:          f.tags,
		Prune:         f.prune,
		Depth:         f.depth,
		Force:         f.force,
		ClientOptions: clientOptions(),
	})
	var rejected []fetchLine
	if errors.Is(err, git.ErrForceNeeded) {
		// go-git updated what it could; git names what it refused.
		if rejected, err = refusedUpdates(rp, rem, f, before); err != nil {
			return nil, nil, fetchError(f.url, err)
		}
	} else if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, nil, fetchError(f.url, err)
	}
	// go-git's prune takes symbolic refs (origin/HEAD) for stale ones;
	// git keeps them.
	for _, r := range symbolic {
		if _, err := rp.r.Storer.Reference(r.Name()); err != nil {
			_ = rp.r.Storer.SetReference(r)
		}
	}
	after, err := refSnapshot(rp)
	if err != nil {
		return nil, nil, err
	}
	var out []refChange
	for n, h := range after {
		if old := before[n]; old != h {
			out = append(out, refChange{local: n, old: old, new: h})
		}
	}
	for n, h := range before {
		if _, ok := after[n]; !ok {
			out = append(out, refChange{local: n, old: h})
		}
	}
	return out, rejected, nil
}

// refusedUpdates lists the refs a fetch did not update because that
// needed force: a tag that moved on the remote, or a branch named by a
// refspec without "+" that did not fast-forward.
func refusedUpdates(rp *repo, rem *git.Remote, f fetchSpec, before map[plumbing.ReferenceName]plumbing.Hash) ([]fetchLine, error) {
	list, err := rem.ListContext(gocontext.Background(), &git.ListOptions{ClientOptions: clientOptions()})
	if err != nil {
		return nil, err
	}
	var out []fetchLine
	for _, r := range list {
		if r.Type() != plumbing.HashReference || !validRemoteRef(r.Name()) {
			continue
		}
		var dst plumbing.ReferenceName
		force := false
		for _, s := range f.specs {
			if s.Match(r.Name()) {
				dst, force = s.Dst(r.Name()), s.IsForceUpdate()
			}
		}
		if dst == "" && r.Name().IsTag() && f.tags == plumbing.AllTags {
			dst = r.Name()
		}
		old, ok := before[dst]
		if dst == "" || force || !ok || old == r.Hash() {
			continue
		}
		switch {
		case dst.IsTag():
			out = append(out, fetchLine{code: '!', summary: "[rejected]", remote: prettyRef(r.Name()), local: prettyRef(dst), note: "would clobber existing tag"})
		case !isAncestor(rp, old, r.Hash()):
			out = append(out, fetchLine{code: '!', summary: "[rejected]", remote: prettyRef(r.Name()), local: prettyRef(dst), note: "non-fast-forward"})
		}
	}
	return out, nil
}

var errRepoNotFound = errors.New("repository not found")

// fetchError maps a failed fetch to git's message.
func fetchError(u string, err error) error {
	var xe *exitError
	if errors.As(err, &xe) || errors.Is(err, git.ErrRemoteRefNotFound) {
		// The caller words a missing ref as the user named it.
		return err
	}
	return transportError(u, err)
}

// prettyRef is a ref name as git prints it in fetch and push reports.
func prettyRef(n plumbing.ReferenceName) string {
	s := n.String()
	for _, p := range []string{"refs/heads/", "refs/tags/", "refs/remotes/"} {
		if strings.HasPrefix(s, p) {
			return s[len(p):]
		}
	}
	return s
}

// fetchLine is one line of a fetch report.
type fetchLine struct {
	code    byte
	summary string
	remote  string
	local   string
	note    string
}

// remoteNameFor maps a local ref back to the remote ref it came from
// through the refspecs.
func remoteNameFor(local plumbing.ReferenceName, specs []config.RefSpec) string {
	if local.IsTag() {
		return prettyRef(local)
	}
	for _, s := range specs {
		r := s.Reverse()
		if r.Match(local) {
			return prettyRef(r.Dst(local))
		}
	}
	return prettyRef(local)
}

// reportFetch prints git's fetch report for changes: pruned refs first,
// then the refs named on the command line (into FETCH_HEAD), then updated
// branches, then tags, each sorted, as git orders its ref map.
func reportFetch(w io.Writer, rp *repo, u string, changes []refChange, specs []config.RefSpec, extra, rejected []fetchLine) {
	var pruned, branches, tags []fetchLine
	for _, c := range changes {
		l := changeLine(rp, c, specs)
		switch {
		case l.code == '-':
			pruned = append(pruned, l)
		case c.local.IsTag():
			tags = append(tags, l)
		default:
			branches = append(branches, l)
		}
	}
	byRemote := func(a, b fetchLine) int { return strings.Compare(a.remote, b.remote) }
	slices.SortFunc(pruned, func(a, b fetchLine) int { return strings.Compare(a.local, b.local) })
	slices.SortFunc(branches, byRemote)
	slices.SortFunc(tags, byRemote)
	for _, l := range rejected {
		if l.note == "would clobber existing tag" {
			tags = append(tags, l)
		} else {
			branches = append(branches, l)
		}
	}
	slices.SortFunc(branches, byRemote)
	slices.SortFunc(tags, byRemote)
	lines := slices.Concat(pruned, extra, branches, tags)
	if len(lines) == 0 {
		return
	}
	width := 10
	for _, l := range lines {
		if l.code == '-' || len(l.remote) <= width || 21+len(l.remote)+4+len(l.local) >= 80 {
			continue
		}
		width = len(l.remote)
	}
	fmt.Fprintf(w, "From %s\n", fetchDisplayURL(u))
	for _, l := range lines {
		fmt.Fprintf(w, " %c %-*s %-*s -> %s", l.code, summaryWidth, l.summary, width, l.remote, l.local)
		if l.note != "" {
			fmt.Fprintf(w, "  (%s)", l.note)
		}
		fmt.Fprintln(w)
	}
}

// changeLine is the report line of one changed ref.
func changeLine(rp *repo, c refChange, specs []config.RefSpec) fetchLine {
	l := fetchLine{remote: remoteNameFor(c.local, specs), local: prettyRef(c.local)}
	switch {
	case c.new.IsZero():
		l.code, l.summary, l.remote = '-', "[deleted]", "(none)"
	case c.old.IsZero() && c.local.IsTag():
		l.code, l.summary = '*', "[new tag]"
	case c.old.IsZero():
		l.code, l.summary = '*', "[new branch]"
	case c.local.IsTag():
		l.code, l.summary = 't', "[tag update]"
	case isAncestor(rp, c.old, c.new):
		l.code, l.summary = ' ', short(c.old)+".."+short(c.new)
	default:
		l.code, l.summary, l.note = '+', short(c.old)+"..."+short(c.new), "forced update"
	}
	return l
}

// isAncestor reports whether commit a is reachable from commit b.
func isAncestor(rp *repo, a, b plumbing.Hash) bool {
	if a == b {
		return true
	}
	ca, err := rp.r.CommitObject(a)
	if err != nil {
		return false
	}
	cb, err := rp.r.CommitObject(b)
	if err != nil {
		return false
	}
	ok, err := ca.IsAncestor(cb)
	return err == nil && ok
}

// resolveRemote returns the URL and fetch refspecs for a remote name or
// URL given on the command line.
func resolveRemote(rp *repo, arg string) (name, u string, specs []config.RefSpec, err error) {
	cfg, err := rp.loadRepoConfig()
	if err != nil {
		return "", "", nil, err
	}
	if r, ok := findRemote(cfg, arg); ok {
		for _, s := range r.fetch {
			rs := config.RefSpec(s)
			if rs.Validate() == nil {
				specs = append(specs, rs)
			}
		}
		return r.name, r.urls[0], specs, nil
	}
	if isURL(arg) || localPath(arg) != "" {
		return "", arg, nil, nil
	}
	return "", "", nil, fatalf("'%s' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.", arg)
}

// branchUpstream returns the remote and merge ref configured for a branch.
func branchUpstream(rp *repo, branch string) (remote, merge string) {
	cfg, err := rp.loadRepoConfig()
	if err != nil || !cfg.HasSection("branch") || !cfg.Section("branch").HasSubsection(branch) {
		return "", ""
	}
	ss := cfg.Section("branch").Subsection(branch)
	return ss.Option("remote"), ss.Option("merge")
}

// explicitRef is one refspec given on the command line.
type explicitRef struct {
	typed string                 // as typed, for messages
	src   plumbing.ReferenceName // on the remote
	dst   plumbing.ReferenceName // where it is stored (a scratch ref when none was given)
	named bool                   // the refspec named dst
}

// explicitSpecs turns refspecs given on the command line into what to
// fetch: "main" is refs/heads/main into FETCH_HEAD, and, as git does for
// a configured remote, also into its remote-tracking ref.
func explicitSpecs(args []string, configured []config.RefSpec) ([]config.RefSpec, []explicitRef, error) {
	var specs []config.RefSpec
	var refs []explicitRef
	for _, a := range args {
		force := strings.HasPrefix(a, "+")
		a = strings.TrimPrefix(a, "+")
		src, dst, hasDst := strings.Cut(a, ":")
		typed := src
		if !strings.HasPrefix(src, "refs/") {
			if strings.HasPrefix(src, "tags/") || strings.HasPrefix(src, "heads/") {
				src = "refs/" + src
			} else {
				src = "refs/heads/" + src
			}
		}
		if hasDst && dst != "" && !strings.HasPrefix(dst, "refs/") {
			dst = "refs/heads/" + dst
		}
		named := hasDst && dst != ""
		if !named {
			// Fetched for FETCH_HEAD: a scratch ref keeps the objects
			// reachable until FETCH_HEAD is written.
			dst = "refs/secexec-fetch/" + strings.TrimPrefix(src, "refs/")
		}
		for _, d := range []string{src, dst} {
			if !validRemoteRef(plumbing.ReferenceName(d)) {
				return nil, nil, fatalf("invalid refspec '%s'", a)
			}
		}
		s := src + ":" + dst
		if force {
			s = "+" + s
		}
		specs = append(specs, config.RefSpec(s))
		refs = append(refs, explicitRef{typed: typed, src: plumbing.ReferenceName(src), dst: plumbing.ReferenceName(dst), named: named})
		// The remote-tracking ref is updated too when a configured
		// refspec maps src.
		for _, c := range configured {
			if c.Match(plumbing.ReferenceName(src)) && !c.IsWildcard() || c.IsWildcard() && c.Match(plumbing.ReferenceName(src)) {
				specs = append(specs, config.RefSpec("+"+src+":"+c.Dst(plumbing.ReferenceName(src)).String()))
				break
			}
		}
	}
	return specs, refs, nil
}

// writeFetchHead records what a fetch of explicit refs got, in git's
// FETCH_HEAD format, for FETCH_HEAD as a revision.
func writeFetchHead(rp *repo, u string, refs []explicitRef, hashes []plumbing.Hash) error {
	var b strings.Builder
	for i, r := range refs {
		kind := "branch "
		switch {
		case r.src == plumbing.HEAD:
			kind = ""
		case r.src.IsTag():
			kind = "tag "
		}
		what := kind + "'" + prettyRef(r.src) + "' of "
		if r.src == plumbing.HEAD {
			what = ""
		}
		fmt.Fprintf(&b, "%s\t\t%s%s\n", hashes[i], what, fetchDisplayURL(u))
	}
	return os.WriteFile(filepath.Join(rp.gitDir(), "FETCH_HEAD"), []byte(b.String()), 0o644)
}

// cmdFetch: git fetch [-q] [--all] [--prune|-p] [--tags|-t] [--depth N] [REMOTE [REFSPEC...]].
func cmdFetch(e *env, args []string) error {
	quiet, all, prune, tags, depth := false, false, false, false, 0
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--all":
			all = true
		case a == "-p" || a == "--prune":
			prune = true
		case a == "-t" || a == "--tags":
			tags = true
		case a == "--depth" && i+1 < len(args):
			depth = atoiOr(args[i+1], -1)
			i++
		case strings.HasPrefix(a, "--depth="):
			depth = atoiOr(strings.TrimPrefix(a, "--depth="), -1)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			return usagef("error: unknown option `%s'\nusage: git fetch [<options>] [<repository> [<refspec>...]]", strings.TrimLeft(a, "-"))
		default:
			rest = append(rest, a)
		}
	}
	if depth < 0 {
		return fatalf("depth %s is not a positive number", args[len(args)-1])
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	var out io.Writer = e.stderr
	if quiet {
		out = io.Discard
	}
	if all {
		if len(rest) > 0 {
			return fatalf("fetch --all does not take a repository argument")
		}
		cfg, err := rp.loadRepoConfig()
		if err != nil {
			return err
		}
		rs := remotes(cfg)
		for _, r := range rs {
			// With one remote git fetches it without the heading.
			if !quiet && len(rs) > 1 {
				fmt.Fprintf(e.stdout, "Fetching %s\n", r.name)
			}
			if err := fetchOne(rp, out, r.name, nil, tags, prune, depth); err != nil {
				return err
			}
		}
		return nil
	}
	remote := ""
	if len(rest) > 0 {
		remote, rest = rest[0], rest[1:]
	} else {
		branch, _, _ := rp.branch()
		if remote, _ = branchUpstream(rp, branch); remote == "" {
			remote = "origin"
		}
	}
	return fetchOne(rp, out, remote, rest, tags, prune, depth)
}

func atoiOr(s string, def int) int {
	n := 0
	if s == "" {
		return def
	}
	for _, c := range s {
		if c < '0' || c > '9' || n > 1<<20 {
			return def
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// fetchOne fetches from one remote (a name or a URL), with the given
// refspecs or the configured ones, and reports what changed.
func fetchOne(rp *repo, out io.Writer, remote string, refspecs []string, tags, prune bool, depth int) error {
	_, err := fetchWithHeads(rp, out, remote, refspecs, tags, prune, depth)
	return err
}

// fetchWithHeads is fetchOne returning the hashes of the explicitly
// named refs (what FETCH_HEAD records), for git pull.
func fetchWithHeads(rp *repo, out io.Writer, remote string, refspecs []string, tags, prune bool, depth int) ([]plumbing.Hash, error) {
	name, u, configured, err := resolveRemote(rp, remote)
	if err != nil {
		return nil, err
	}
	specs := configured
	var explicit []explicitRef
	if len(refspecs) > 0 {
		if specs, explicit, err = explicitSpecs(refspecs, configured); err != nil {
			return nil, err
		}
	}
	if len(specs) == 0 {
		// A URL with no refspec fetches its HEAD into FETCH_HEAD.
		specs = []config.RefSpec{config.RefSpec("+HEAD:refs/secexec-fetch/HEAD")}
		explicit = []explicitRef{{typed: "HEAD", src: plumbing.HEAD, dst: "refs/secexec-fetch/HEAD"}}
	}
	mode := plumbing.TagFollowing
	if tags {
		mode = plumbing.AllTags
	}
	if len(explicit) > 0 && name == "" {
		mode = plumbing.NoTags
	}
	changes, rejected, err := fetchRefs(rp, fetchSpec{remote: name, url: u, specs: specs, tags: mode, prune: prune, depth: depth})
	if errors.Is(err, git.ErrRemoteRefNotFound) {
		for _, r := range explicit {
			if !strings.Contains(err.Error(), r.src.String()) {
				continue
			}
			return nil, fatalf("couldn't find remote ref %s", r.typed)
		}
		return nil, fatalf("%s", redact(err.Error(), u))
	}
	if err != nil {
		return nil, err
	}
	// Lines for the refs named on the command line come first, in their
	// order; then the other updates.
	byLocal := map[plumbing.ReferenceName]refChange{}
	for _, c := range changes {
		byLocal[c.local] = c
	}
	var first []fetchLine
	var hashes []plumbing.Hash
	for _, r := range explicit {
		ref, err := rp.r.Storer.Reference(r.dst)
		if err != nil {
			return nil, fatalf("couldn't find remote ref %s", r.typed)
		}
		hashes = append(hashes, ref.Hash())
		if r.named {
			if c, ok := byLocal[r.dst]; ok {
				first = append(first, changeLine(rp, c, specs))
				delete(byLocal, r.dst)
			}
			continue
		}
		kind := "branch"
		if r.src.IsTag() {
			kind = "tag"
		}
		rn := prettyRef(r.src)
		if r.src == plumbing.HEAD {
			kind, rn = "", "HEAD"
		}
		first = append(first, fetchLine{code: '*', summary: kind, remote: rn, local: "FETCH_HEAD"})
	}
	var rest []refChange
	for _, c := range changes {
		if _, ok := byLocal[c.local]; ok && !strings.HasPrefix(c.local.String(), "refs/secexec-fetch/") {
			rest = append(rest, c)
		}
	}
	reportFetch(out, rp, u, rest, specs, first, rejected)
	if len(explicit) > 0 {
		if err := writeFetchHead(rp, u, explicit, hashes); err != nil {
			return nil, err
		}
	}
	_ = deleteRefsUnder(rp, "refs/secexec-fetch/")
	if len(rejected) > 0 {
		return hashes, &exitError{code: 1}
	}
	return hashes, nil
}
