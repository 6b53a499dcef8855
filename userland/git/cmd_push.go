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
	"github.com/go-git/go-git/v6/plumbing/transport"
)

// pushCmd is one ref update a push asks the remote for.
type pushCmd struct {
	src, dst plumbing.ReferenceName // src "" deletes dst
	shown    string                 // src as the report names it ("HEAD"), if not src's short name
	force    bool
	new, old plumbing.Hash
	status   string // "", "uptodate", "rejected"
	reason   string
}

const noUpstreamPush = `fatal: The current branch %s has no upstream branch.
To push the current branch and set the remote as upstream, use

    git push --set-upstream %s %s

To have this happen automatically for branches without a tracking
upstream, see 'push.autoSetupRemote' in 'git help config'.
`

// cmdPush: git push [-q] [-u] [-f] [--tags] [-d] [REMOTE [REFSPEC...]].
func cmdPush(e *env, args []string) error {
	quiet, setUp, force, tags, del, lease := false, false, false, false, false, false
	var rest []string
	for _, a := range expandShort(args, "") {
		switch a {
		case "-q", "--quiet":
			quiet = true
		case "-u", "--set-upstream":
			setUp = true
		case "-f", "--force":
			force = true
		case "--tags":
			tags = true
		case "-d", "--delete":
			del = true
		case "--force-with-lease":
			lease = true
		default:
			if strings.HasPrefix(a, "-") && len(a) > 1 {
				return usagef("error: unknown option `%s'\nusage: git push [<options>] [<repository> [<refspec>...]]", strings.TrimLeft(a, "-"))
			}
			rest = append(rest, a)
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	branch, attached, err := rp.branch()
	if err != nil {
		return err
	}
	remote, remoteGiven := "", len(rest) > 0
	if len(rest) > 0 {
		remote, rest = rest[0], rest[1:]
	}
	upRemote, upMerge := "", ""
	if attached {
		upRemote, upMerge = branchUpstream(rp, branch)
	}
	if remote == "" {
		if remote = upRemote; remote == "" {
			remote = "origin"
		}
	}
	name, u, fetchSpecs, err := resolveRemote(rp, remote)
	if err != nil {
		if remote == "origin" && len(args) == 0 {
			return fatalf("No configured push destination.\nEither specify the URL from the command-line or configure a remote repository using\n\n    git remote add <name> <url>\n\nand then push using the remote name\n\n    git push <name>\n")
		}
		return err
	}
	if err := checkScheme(u); err != nil {
		return err
	}
	var cmds []*pushCmd
	switch {
	case del:
		if len(rest) == 0 {
			return fatalf("--delete doesn't make sense without any refs")
		}
		for _, r := range rest {
			cmds = append(cmds, &pushCmd{dst: qualifyDst(r, "")})
		}
	case len(rest) > 0:
		for _, r := range rest {
			c, err := parsePushSpec(rp, r)
			if err != nil {
				return err
			}
			c.force = c.force || force
			cmds = append(cmds, c)
		}
	case tags:
	default:
		if !attached {
			return fatalf("You are not currently on a branch.\nTo push the history leading to the current (detached HEAD)\nstate now, use\n\n    git push %s HEAD:<name-of-remote-branch>\n", remote)
		}
		// push.default=simple: to the upstream when pushing to the
		// upstream's remote, else to the branch of the same name.
		dst := plumbing.NewBranchReferenceName(branch)
		if !remoteGiven && upMerge == "" {
			return &exitError{code: 128, msg: strings.TrimSuffix(fmt.Sprintf(noUpstreamPush, branch, remote, branch), "\n")}
		}
		if upMerge != "" && upRemote == name {
			dst = plumbing.ReferenceName(upMerge)
		}
		cmds = append(cmds, &pushCmd{src: plumbing.NewBranchReferenceName(branch), dst: dst, force: force})
	}
	if tags {
		iter, err := rp.r.Tags()
		if err != nil {
			return err
		}
		_ = iter.ForEach(func(r *plumbing.Reference) error {
			cmds = append(cmds, &pushCmd{src: r.Name(), dst: r.Name(), force: force})
			return nil
		})
	}
	for _, c := range cmds {
		if c.src != "" {
			ref, err := rp.r.Reference(c.src, true)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("error: src refspec %s does not match any\nerror: failed to push some refs to '%s'", c.src.Short(), displayURL(u))}
			}
			c.new = ref.Hash()
		}
	}
	// What the remote has now decides each command's outcome and report.
	rem := git.NewRemote(rp.r.Storer, &config.RemoteConfig{Name: orAnon(name), URLs: []string{u}, Fetch: fetchSpecs})
	list, err := rem.ListContext(gocontext.Background(), &git.ListOptions{ClientOptions: clientOptions()})
	if err != nil && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return transportError(u, err)
	}
	remoteRefs := map[plumbing.ReferenceName]plumbing.Hash{}
	for _, r := range list {
		if r.Type() == plumbing.HashReference && validRemoteRef(r.Name()) {
			remoteRefs[r.Name()] = r.Hash()
		}
	}
	checkedOut := localCheckedOut(u)
	var send []config.RefSpec
	rejected := false
	fetchFirst := false
	for _, c := range cmds {
		c.old = remoteRefs[c.dst]
		if lease && !c.force && c.src != "" && c.old != c.new {
			// --force-with-lease: forced only while the remote still has
			// what our remote-tracking ref says it has.
			expect := plumbing.ZeroHash
			for _, s := range fetchSpecs {
				if s.Match(c.dst) {
					if ref, err := rp.r.Storer.Reference(s.Dst(c.dst)); err == nil {
						expect = ref.Hash()
					}
				}
			}
			if expect != c.old {
				c.status, c.reason = "rejected", "stale info"
				rejected = true
				continue
			}
			c.force = true
		}
		switch {
		case checkedOut != "" && c.dst == checkedOut && c.old != c.new:
			// git's receive.denyCurrentBranch=refuse: the other
			// repository's worktree would no longer match its HEAD.
			c.status, c.reason = "remote rejected", "branch is currently checked out"
			fmt.Fprint(e.stderr, strings.ReplaceAll(denyCurrentBranch, "REF", c.dst.String()))
			rejected = true
		case c.src == "" && c.old.IsZero():
			fmt.Fprintf(e.stderr, "error: unable to delete '%s': remote ref does not exist\n", c.dst.Short())
			c.status = "missing"
			rejected = true
		case c.src == "":
			send = append(send, config.RefSpec(":"+c.dst.String()))
		case c.old == c.new:
			c.status = "uptodate"
		case c.old.IsZero() || c.force:
			send = append(send, config.RefSpec("+"+c.src.String()+":"+c.dst.String()))
		case c.dst.IsTag():
			c.status, c.reason = "rejected", "already exists"
			rejected = true
		default:
			if _, err := rp.r.CommitObject(c.old); err != nil {
				c.status, c.reason = "rejected", "fetch first"
				fetchFirst = true
			} else if !isAncestor(rp, c.old, c.new) {
				c.status, c.reason = "rejected", "non-fast-forward"
			} else {
				send = append(send, config.RefSpec(c.src.String()+":"+c.dst.String()))
				continue
			}
			rejected = true
		}
	}
	if len(send) > 0 {
		err := rem.PushContext(gocontext.Background(), &git.PushOptions{
			RemoteName:    orAnon(name),
			RefSpecs:      send,
			ClientOptions: clientOptions(),
			Quiet:         true,
		})
		if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
			return transportError(u, err)
		}
	}
	// Remote-tracking refs follow what was pushed.
	for _, c := range cmds {
		if c.status != "" {
			continue
		}
		for _, s := range fetchSpecs {
			if !s.Match(c.dst) {
				continue
			}
			local := s.Dst(c.dst)
			if c.src == "" {
				_ = rp.r.Storer.RemoveReference(local)
			} else if err := rp.r.Storer.SetReference(plumbing.NewHashReference(local, c.new)); err != nil {
				return err
			}
		}
	}
	var out io.Writer = e.stderr
	if quiet {
		out = io.Discard
	}
	reportPush(out, rp, u, cmds, rejected)
	if setUp && name != "" {
		for _, c := range cmds {
			if c.status == "rejected" || c.status == "remote rejected" || !c.src.IsBranch() {
				continue
			}
			cfg, err := rp.loadRepoConfig()
			if err != nil {
				return err
			}
			setInPlace(cfg, "branch", c.src.Short(), "remote", name)
			setInPlace(cfg, "branch", c.src.Short(), "merge", c.dst.String())
			if err := saveConfig(rp.configFile(), cfg); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "branch '%s' set up to track '%s/%s'.\n", c.src.Short(), name, c.dst.Short())
		}
	}
	if rejected {
		msg := fmt.Sprintf("error: failed to push some refs to '%s'", displayURL(u))
		if !quiet && !hasStatus(cmds, "remote rejected") {
			msg += pushHint(cmds, fetchFirst)
		}
		return &exitError{code: 1, msg: msg}
	}
	return nil
}

func orAnon(name string) string {
	if name == "" {
		return "anonymous"
	}
	return name
}

// qualifyDst is a push destination's full ref name: like git, a short
// name is the branch (or tag) of that name that src is.
func qualifyDst(dst string, src plumbing.ReferenceName) plumbing.ReferenceName {
	if strings.HasPrefix(dst, "refs/") {
		return plumbing.ReferenceName(dst)
	}
	if src.IsTag() {
		return plumbing.NewTagReferenceName(dst)
	}
	return plumbing.NewBranchReferenceName(dst)
}

// parsePushSpec reads [+]SRC[:DST].
func parsePushSpec(rp *repo, s string) (*pushCmd, error) {
	force := strings.HasPrefix(s, "+")
	s = strings.TrimPrefix(s, "+")
	src, dst, hasDst := strings.Cut(s, ":")
	c := &pushCmd{force: force}
	if src == "" && hasDst {
		c.dst = qualifyDst(dst, "")
		return c, nil
	}
	switch {
	case src == "HEAD":
		c.shown = "HEAD"
		ref, err := rp.r.Storer.Reference(plumbing.HEAD)
		if err != nil {
			return nil, err
		}
		if ref.Type() == plumbing.SymbolicReference {
			c.src = ref.Target()
		} else {
			c.src = plumbing.HEAD
		}
	case strings.HasPrefix(src, "refs/"):
		c.src = plumbing.ReferenceName(src)
	default:
		if _, err := rp.r.Reference(plumbing.NewBranchReferenceName(src), true); err == nil {
			c.src = plumbing.NewBranchReferenceName(src)
		} else if _, err := rp.r.Reference(plumbing.NewTagReferenceName(src), true); err == nil {
			c.src = plumbing.NewTagReferenceName(src)
		} else {
			c.src = plumbing.NewBranchReferenceName(src)
		}
	}
	if !hasDst || dst == "" {
		if c.src == plumbing.HEAD {
			return nil, fatalf("The destination you provided is not a full refname (i.e.,\nstarting with \"refs/\"). We tried to guess what you meant by:")
		}
		c.dst = c.src
	} else {
		c.dst = qualifyDst(dst, c.src)
	}
	if c.dst.Validate() != nil {
		return nil, fatalf("invalid refspec '%s'", s)
	}
	return c, nil
}

// reportPush prints git's push report: "To URL" and a line per ref that
// changed or was refused, or "Everything up-to-date".
func reportPush(w io.Writer, rp *repo, u string, cmds []*pushCmd, rejected bool) {
	var lines []string
	sorted := slices.Clone(cmds)
	slices.SortStableFunc(sorted, func(a, b *pushCmd) int { return strings.Compare(a.dst.String(), b.dst.String()) })
	for _, c := range sorted {
		var flag byte
		var summary, msg string
		switch {
		case c.status == "uptodate" || c.status == "missing":
			continue
		case c.status == "rejected":
			flag, summary, msg = '!', "[rejected]", c.reason
		case c.status == "remote rejected":
			flag, summary, msg = '!', "[remote rejected]", c.reason
		case c.src == "":
			flag, summary = '-', "[deleted]"
		case c.old.IsZero() && c.dst.IsTag():
			flag, summary = '*', "[new tag]"
		case c.old.IsZero() && c.dst.IsBranch():
			flag, summary = '*', "[new branch]"
		case c.old.IsZero():
			flag, summary = '*', "[new reference]"
		case !c.dst.IsTag() && isAncestor(rp, c.old, c.new):
			flag, summary = ' ', short(c.old)+".."+short(c.new)
		default:
			// Moving a tag is always a forced update.
			flag, summary, msg = '+', short(c.old)+"..."+short(c.new), "forced update"
		}
		line := fmt.Sprintf(" %c %-*s ", flag, summaryWidth, summary)
		switch {
		case c.src == "":
			line += prettyRef(c.dst)
		case c.shown != "":
			line += c.shown + " -> " + prettyRef(c.dst)
		default:
			line += prettyRef(c.src) + " -> " + prettyRef(c.dst)
		}
		if msg != "" {
			line += " (" + msg + ")"
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		if !rejected {
			fmt.Fprintln(w, "Everything up-to-date")
		}
		return
	}
	fmt.Fprintf(w, "To %s\n", displayURL(u))
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// pushHint is git's advice after a refused push.
func pushHint(cmds []*pushCmd, fetchFirst bool) string {
	if fetchFirst {
		return "\nhint: Updates were rejected because the remote contains work that you do\n" +
			"hint: not have locally. This is usually caused by another repository pushing\n" +
			"hint: to the same ref. You may want to first integrate the remote changes\n" +
			"hint: (e.g., 'git pull ...') before pushing again.\n" +
			"hint: See the 'Note about fast-forwards' in 'git push --help' for details."
	}
	for _, c := range cmds {
		if c.reason == "stale info" {
			return ""
		}
		if c.reason == "non-fast-forward" {
			return "\nhint: Updates were rejected because the tip of your current branch is behind\n" +
				"hint: its remote counterpart. Integrate the remote changes (e.g.\n" +
				"hint: 'git pull ...') before pushing again.\n" +
				"hint: See the 'Note about fast-forwards' in 'git push --help' for details."
		}
		if c.reason == "already exists" {
			return "\nhint: Updates were rejected because the tag already exists in the remote."
		}
	}
	return ""
}

func hasStatus(cmds []*pushCmd, status string) bool {
	for _, c := range cmds {
		if c.status == status {
			return true
		}
	}
	return false
}

// localCheckedOut is the branch checked out in a non-bare repository at
// local path u that refuses pushes to it (git's default,
// receive.denyCurrentBranch=refuse), or "".
func localCheckedOut(u string) plumbing.ReferenceName {
	if isURL(u) && !strings.HasPrefix(u, "file://") {
		return ""
	}
	gitDir := localPath(u)
	if gitDir == "" || filepath.Base(gitDir) != ".git" {
		return ""
	}
	if v, ok := getOption(filepath.Join(gitDir, "config"), "receive", "", "denycurrentbranch"); ok && v != "refuse" && v != "true" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: ")
	if !ok {
		return ""
	}
	return plumbing.ReferenceName(ref)
}

// denyCurrentBranch is what git's receive-pack says when it refuses; the
// padding is the sideband's, which clears the rest of a terminal line.
const denyCurrentBranch = "remote: error: refusing to update checked out branch: REF        \n" +
	"remote: error: By default, updating the current branch in a non-bare repository        \n" +
	"remote: is denied, because it will make the index and work tree inconsistent        \n" +
	"remote: with what you pushed, and will require 'git reset --hard' to match        \n" +
	"remote: the work tree to HEAD.        \n" +
	"remote: \n" +
	"remote: You can set the 'receive.denyCurrentBranch' configuration variable        \n" +
	"remote: to 'ignore' or 'warn' in the remote repository to allow pushing into        \n" +
	"remote: its current branch; however, this is not recommended unless you        \n" +
	"remote: arranged to update its work tree to match what you pushed in some        \n" +
	"remote: other way.        \n" +
	"remote: \n" +
	"remote: To squelch this message and still keep the default behaviour, set        \n" +
	"remote: 'receive.denyCurrentBranch' configuration variable to 'refuse'.        \n"
