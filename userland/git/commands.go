package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// cmdInit: git init [-q] [-b NAME|--initial-branch=NAME] [DIR].
func cmdInit(e *env, args []string) error {
	quiet, branch, dir := false, "", "."
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-q" || a == "--quiet":
			quiet = true
		case (a == "-b" || a == "--initial-branch") && i+1 < len(args):
			branch = args[i+1]
			i++
		case strings.HasPrefix(a, "--initial-branch="):
			branch = strings.TrimPrefix(a, "--initial-branch=")
		case strings.HasPrefix(a, "-"):
			return usagef("error: unknown option `%s'\nusage: git init [-q] [-b <branch-name>] [<directory>]", strings.TrimLeft(a, "-"))
		default:
			dir = a
		}
	}
	if branch == "" {
		branch = configValue(nil, "init", "defaultBranch")
	}
	if branch == "" {
		branch = "master"
	}
	if !plumbing.NewBranchReferenceName(branch).IsBranch() || strings.ContainsAny(branch, " ~^:?*[\\") || branch == "" {
		return fatalf("invalid initial branch name: '%s'", branch)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fatalf("cannot mkdir %s: %s", dir, errText(err))
	}
	verb := "Initialized empty"
	if _, err := git.PlainInit(abs, false, git.WithDefaultBranch(plumbing.NewBranchReferenceName(branch))); err != nil {
		if !errors.Is(err, git.ErrTargetDirNotEmpty) {
			return err
		}
		verb = "Reinitialized existing"
	} else if err := writeGitCore(filepath.Join(abs, ".git", "config"), false); err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(e.stdout, "%s Git repository in %s/\n", verb, filepath.Join(abs, ".git"))
	}
	return nil
}

// cmdAdd: git add [-A|--all] [--] PATHSPEC...
func cmdAdd(e *env, args []string) error {
	all := false
	var specs []string
	for i, a := range args {
		switch {
		case a == "-A" || a == "--all":
			all = true
		case a == "--":
			specs = append(specs, args[i+1:]...)
		case strings.HasPrefix(a, "-") && !slices.Contains(args[:i], "--"):
			return usagef("error: unknown option `%s'\nusage: git add [-A] [--] <pathspec>...", strings.TrimLeft(a, "-"))
		default:
			if !slices.Contains(args[:i], "--") {
				specs = append(specs, a)
			}
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	if err := resolveConflicts(rp, specs, all); err != nil {
		return err
	}
	if all && len(specs) == 0 {
		return rp.wt.AddWithOptions(&git.AddOptions{All: true})
	}
	if len(specs) == 0 {
		fmt.Fprintln(e.stderr, "Nothing specified, nothing added.")
		return nil
	}
	for _, spec := range specs {
		rel, err := rp.rel(spec)
		if err != nil {
			return err
		}
		if strings.ContainsAny(spec, "*?[") {
			if err := rp.wt.AddGlob(rel); err != nil {
				return fatalf("pathspec '%s' did not match any files", spec)
			}
			continue
		}
		if rel == "." {
			if err := rp.wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
				return err
			}
			continue
		}
		if _, err := rp.wt.Add(rel); err != nil {
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, plumbing.ErrObjectNotFound) {
				return fatalf("pathspec '%s' did not match any files", spec)
			}
			return err
		}
	}
	return nil
}

// cleanMessage applies git's "whitespace" clean-up to a -m message:
// trailing blanks and leading/trailing empty lines go, runs of empty
// lines become one, and the message ends with a newline.
func cleanMessage(parts []string) string {
	var lines []string
	for _, l := range strings.Split(strings.Join(parts, "\n\n"), "\n") {
		lines = append(lines, strings.TrimRight(l, " \t\r"))
	}
	var out []string
	for _, l := range lines {
		if l == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, l)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, "\n") + "\n"
}

// expandShort splits bundled short options ("-qam MSG" is "-q -a -m
// MSG"); letters in valued take the rest of the bundle, or the next
// argument, as their value. Everything after "--" is left alone.
func expandShort(args []string, valued string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' || isDigits(a[1:]) {
			out = append(out, a)
			continue
		}
		for j := 1; j < len(a); j++ {
			out = append(out, "-"+string(a[j]))
			if strings.IndexByte(valued, a[j]) >= 0 {
				if j+1 < len(a) {
					out = append(out, a[j+1:])
				}
				break
			}
		}
	}
	return out
}

// cmdCommit: git commit [-q] [-a] [--allow-empty] [--amend [--no-edit]]
// [(-m MSG)... | -F FILE]; it also concludes a merge, cherry-pick or
// revert stopped by conflicts.
func cmdCommit(e *env, args []string) error {
	args = expandShort(args, "mF")
	var msgs []string
	var file string
	all, quiet, allowEmpty, amend, noEdit, strip := false, false, false, false, false, false
	signoff, resetAuthor, allowEmptyMsg := false, false, false
	authorArg, dateArg := "", ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-m" || a == "--message") && i+1 < len(args):
			msgs = append(msgs, args[i+1])
			i++
		case strings.HasPrefix(a, "--message="):
			msgs = append(msgs, strings.TrimPrefix(a, "--message="))
		case (a == "-F" || a == "--file") && i+1 < len(args):
			file = args[i+1]
			i++
		case strings.HasPrefix(a, "--file="):
			file = strings.TrimPrefix(a, "--file=")
		case a == "-a" || a == "--all":
			all = true
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--allow-empty":
			allowEmpty = true
		case a == "--amend":
			amend = true
		case a == "--no-edit":
			noEdit = true
		case a == "--cleanup=strip" || a == "--cleanup=whitespace":
			strip = a == "--cleanup=strip"
		case strings.HasPrefix(a, "--author="):
			authorArg = strings.TrimPrefix(a, "--author=")
		case a == "--author" && i+1 < len(args):
			authorArg = args[i+1]
			i++
		case strings.HasPrefix(a, "--date="):
			dateArg = strings.TrimPrefix(a, "--date=")
		case a == "-s" || a == "--signoff":
			signoff = true
		case a == "--reset-author":
			resetAuthor = true
		case a == "--allow-empty-message":
			allowEmptyMsg = true
		case a == "-n" || a == "--no-verify" || a == "-v" || a == "--verbose" || a == "--no-gpg-sign" || a == "--no-signoff":
			// No hooks run in the VM; -v only adds to the editor's text.
		case a == "-m" || a == "-F" || a == "--message" || a == "--file":
			return usagef("error: switch `%s' requires a value", strings.TrimLeft(a, "-")[:1])
		default:
			return usagef("error: unsupported option `%s'\nusage: git commit [-q] [-a] [--allow-empty] [--amend [--no-edit]] (-m <msg> | -F <file>)", a)
		}
	}
	if file != "" && len(msgs) > 0 {
		return fatalf("options '-m' and '-F' cannot be used together")
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	parent, err := rp.head()
	if err != nil {
		return err
	}
	if amend && parent == nil {
		return fatalf("You have nothing to amend.")
	}
	// A merge, cherry-pick or revert stopped by conflicts is concluded
	// here, with its prepared message: as is with --no-edit, else as the
	// editor's starting text, as git does.
	pending, err := readPending(rp)
	if err != nil {
		return err
	}
	merging := pending != nil && pending.merge && parent != nil
	if amend && merging {
		return fatalf("You are in the middle of a merge -- cannot amend.")
	}
	if amend && pending != nil && len(pending.files) > 0 && pending.files[0] == "CHERRY_PICK_HEAD" {
		return fatalf("You are in the middle of a cherry-pick -- cannot amend.")
	}
	if all {
		if err := stageTracked(rp); err != nil {
			return err
		}
	}
	if un, err := unmergedPaths(rp); err != nil {
		return err
	} else if len(un) > 0 {
		for _, p := range un {
			fmt.Fprintf(e.stdout, "U\t%s\n", rp.display(p))
		}
		return unmergedError("Committing")
	}
	// As git: the message given is read first, then an empty commit is
	// refused, and only then is the editor started.
	var msg string
	given := file != "" || len(msgs) > 0
	switch {
	case file != "":
		text, err := readMessageFile(file)
		if err != nil {
			return err
		}
		msgs = []string{text}
	case len(msgs) > 0:
	case amend && noEdit:
		msgs = []string{parent.Message}
		given = true
	case pending != nil && noEdit:
		msgs = []string{pending.msg}
		given = true
	}
	if given {
		if strip {
			msgs = []string{stripComments(strings.Join(msgs, "\n\n"))}
		}
		msg = cleanMessage(msgs)
	}
	if !allowEmpty && !merging {
		if err := checkNotEmpty(e, rp, parent, amend); err != nil {
			return err
		}
	}
	if !given {
		prepared := ""
		switch {
		case amend:
			prepared = parent.Message
		case pending != nil:
			prepared = pending.msg
		}
		if msg, err = editMessage(e, rp, prepared); err != nil {
			return err
		}
	}
	if msg == "" && !allowEmptyMsg {
		return &exitError{code: 1, msg: "Aborting commit due to empty commit message."}
	}
	author, err := identity(e, rp, "AUTHOR")
	if err != nil {
		return err
	}
	committer, err := identity(e, rp, "COMMITTER")
	if err != nil {
		return err
	}
	// git keeps the author of the commit amended or picked, and shows
	// its date.
	keptAuthor := false
	switch {
	case resetAuthor || authorArg != "":
	case amend:
		a := parent.Author
		author, keptAuthor = &a, true
	case pending != nil && pending.author != nil:
		author, keptAuthor = pending.author, true
	}
	if authorArg != "" {
		if author, err = authorFromArg(rp, authorArg, author.When); err != nil {
			return err
		}
	}
	if dateArg != "" {
		t, err := parseDate(dateArg)
		if err != nil {
			return fatalf("invalid date format: %s", dateArg)
		}
		author.When = t
	}
	if signoff {
		msg = addSignoff(msg, committer)
	}
	if amend {
		// The new commit replaces HEAD: the summary is against its
		// parent.
		if len(parent.ParentHashes) > 0 {
			if parent, err = rp.r.CommitObject(parent.ParentHashes[0]); err != nil {
				return err
			}
		} else {
			parent = nil
		}
	}
	opts := &git.CommitOptions{AllowEmptyCommits: allowEmpty, Amend: amend, Author: author, Committer: committer}
	if merging {
		opts.Parents = append([]plumbing.Hash{parent.Hash}, pending.parents...)
		opts.AllowEmptyCommits = true
	}
	h, err := rp.wt.Commit(msg, opts)
	if errors.Is(err, git.ErrEmptyCommit) && amend {
		return &exitError{code: 1, msg: "You asked to amend the most recent commit, but doing so would make\n" +
			"it empty. You can repeat your command with --allow-empty, or you can\n" +
			"remove the commit entirely with \"git reset HEAD^\"."}
	}
	if errors.Is(err, git.ErrEmptyCommit) {
		s, err := readState(rp)
		if err != nil {
			return err
		}
		s.writeLong(e.stdout, rp)
		return &exitError{code: 1}
	}
	if err != nil {
		return err
	}
	if pending != nil {
		removeGitFiles(rp, pending.files...)
	}
	if quiet {
		return nil
	}
	c, err := rp.r.CommitObject(h)
	if err != nil {
		return err
	}
	branch, attached, err := rp.branch()
	if err != nil {
		return err
	}
	if !attached {
		branch = "detached HEAD"
	}
	root := ""
	if parent == nil {
		root = " (root-commit)"
	}
	subject, _, _ := strings.Cut(msg, "\n")
	fmt.Fprintf(e.stdout, "[%s%s %s] %s\n", branch, root, short(h), subject)
	if author.Name != committer.Name || author.Email != committer.Email {
		fmt.Fprintf(e.stdout, " Author: %s <%s>\n", author.Name, author.Email)
	}
	if keptAuthor || dateArg != "" {
		fmt.Fprintf(e.stdout, " Date: %s\n", gitDate(*author))
	}
	if len(c.ParentHashes) > 1 {
		// git prints no diffstat for a merge commit.
		return nil
	}
	return writeSummary(e, rp, parent, c)
}

// writeSummary prints a commit's diffstat summary line and its created
// and deleted files, as git commit does.
func writeSummary(e *env, rp *repo, parent, c *object.Commit) error {
	a, err := treeSnapshot(rp, parent)
	if err != nil {
		return err
	}
	b, err := treeSnapshot(rp, c)
	if err != nil {
		return err
	}
	changes := detectRenames(compare(a, b))
	if len(changes) == 0 {
		return nil
	}
	stats, err := statChanges(changes)
	if err != nil {
		return err
	}
	writeStatSummary(e.stdout, stats)
	writeChangeSummary(e.stdout, changes)
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// cmdBranch: git branch [-d|-D NAME] [NAME [START]] [--show-current].
func cmdBranch(e *env, args []string) error {
	rp, err := openRepo()
	if err != nil {
		return err
	}
	cur, attached, err := rp.branch()
	if err != nil {
		return err
	}
	switch {
	case len(args) == 0:
		iter, err := rp.r.Branches()
		if err != nil {
			return err
		}
		var names []string
		_ = iter.ForEach(func(r *plumbing.Reference) error {
			names = append(names, r.Name().Short())
			return nil
		})
		slices.Sort(names)
		for _, n := range names {
			mark := "  "
			if attached && n == cur {
				mark = "* "
			}
			fmt.Fprintf(e.stdout, "%s%s\n", mark, n)
		}
		return nil
	case len(args) == 1 && (args[0] == "-a" || args[0] == "--all" || args[0] == "-r" || args[0] == "--remotes"):
		return listBranches(e.stdout, rp, args[0] == "-a" || args[0] == "--all", true)
	case args[0] == "--show-current":
		if attached {
			fmt.Fprintln(e.stdout, cur)
		}
		return nil
	case args[0] == "-d" || args[0] == "-D" || args[0] == "--delete":
		if len(args) < 2 {
			return fatalf("branch name required")
		}
		head, err := rp.head()
		if err != nil {
			return err
		}
		for _, name := range args[1:] {
			ref, err := rp.r.Reference(plumbing.NewBranchReferenceName(name), true)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("error: branch '%s' not found.", name)}
			}
			if attached && name == cur {
				return &exitError{code: 1, msg: fmt.Sprintf("error: Cannot delete branch '%s' checked out at '%s'", name, rp.root)}
			}
			if args[0] != "-D" && head != nil {
				c, err := rp.r.CommitObject(ref.Hash())
				if err != nil {
					return err
				}
				merged, err := c.IsAncestor(head)
				if err != nil {
					return err
				}
				if !merged && !c.Hash.Equal(head.Hash) {
					return &exitError{code: 1, msg: fmt.Sprintf("error: The branch '%s' is not fully merged.\nIf you are sure you want to delete it, run 'git branch -D %s'.", name, name)}
				}
			}
			if err := rp.r.Storer.RemoveReference(ref.Name()); err != nil {
				return err
			}
			_ = rp.r.DeleteBranch(name) // its configuration, if any
			fmt.Fprintf(e.stdout, "Deleted branch %s (was %s).\n", name, short(ref.Hash()))
		}
		return nil
	case strings.HasPrefix(args[0], "-"):
		return usagef("error: unsupported option `%s'\nusage: git branch [-d|-D] [<name> [<start>]]", args[0])
	}
	start := "HEAD"
	if len(args) > 1 {
		start = args[1]
	}
	return createBranch(rp, args[0], start)
}

// createBranch makes refs/heads/NAME point at START.
func createBranch(rp *repo, name, start string) error {
	ref := plumbing.NewBranchReferenceName(name)
	if strings.ContainsAny(name, " ~^:?*[\\") || strings.HasPrefix(name, "-") || strings.Contains(name, "..") || name == "HEAD" {
		return fatalf("'%s' is not a valid branch name", name)
	}
	if _, err := rp.r.Reference(ref, false); err == nil {
		return fatalf("a branch named '%s' already exists", name)
	}
	var c *object.Commit
	var err error
	if start == "HEAD" {
		c, err = rp.head()
		if err == nil && c == nil {
			return fatalf("not a valid object name: 'HEAD'")
		}
	} else {
		c, err = rp.resolveCommit(start)
	}
	if err != nil {
		return err
	}
	return rp.r.Storer.SetReference(plumbing.NewHashReference(ref, c.Hash))
}

// cmdCheckout: git checkout [-b NAME [START]] | BRANCH | [--] PATH...
func cmdCheckout(e *env, args []string) error {
	if len(args) > 0 && (args[0] == "-q" || args[0] == "--quiet") {
		// -q silences the feedback; errors still reach run's stderr.
		q := *e
		q.stdout, q.stderr = io.Discard, io.Discard
		e, args = &q, args[1:]
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return usagef("usage: git checkout [-b <new-branch>] <branch> | [--] <path>...")
	}
	if args[0] == "-b" {
		if len(args) < 2 {
			return usagef("error: switch `b' requires a value")
		}
		start := "HEAD"
		if len(args) > 2 {
			start = args[2]
		}
		head, err := rp.head()
		if err != nil {
			return err
		}
		if head == nil && start == "HEAD" {
			// An unborn branch: only HEAD moves.
			if err := rp.r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(args[1]))); err != nil {
				return err
			}
		} else {
			if err := createBranch(rp, args[1], start); err != nil {
				return err
			}
			if err := switchTo(rp, args[1]); err != nil {
				return err
			}
		}
		fmt.Fprintf(e.stderr, "Switched to a new branch '%s'\n", args[1])
		return nil
	}
	paths := args
	if args[0] == "--" {
		paths = args[1:]
	} else if len(args) == 1 {
		if _, err := rp.r.Reference(plumbing.NewBranchReferenceName(args[0]), false); err == nil {
			cur, attached, _ := rp.branch()
			if attached && cur == args[0] {
				fmt.Fprintf(e.stderr, "Already on '%s'\n", cur)
				checkoutTracking(e.stdout, rp)
				return nil
			}
			if err := switchTo(rp, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "Switched to branch '%s'\n", args[0])
			checkoutTracking(e.stdout, rp)
			return nil
		}
		if ok, err := checkoutRemoteBranch(e, rp, args[0]); ok {
			return err
		}
	}
	return restorePaths(rp, paths)
}

// switchTo checks a branch out. Like git, it refuses (and changes
// nothing) when a file that differs between the two commits has local
// changes, staged or not.
func switchTo(rp *repo, name string) error {
	ref, err := rp.r.Reference(plumbing.NewBranchReferenceName(name), true)
	if err != nil {
		return err
	}
	target, err := rp.r.CommitObject(ref.Hash())
	if err != nil {
		return err
	}
	head, err := rp.head()
	if err != nil {
		return err
	}
	a, err := treeSnapshot(rp, head)
	if err != nil {
		return err
	}
	b, err := treeSnapshot(rp, target)
	if err != nil {
		return err
	}
	st, err := rp.wt.Status()
	if err != nil {
		return err
	}
	var blocked []string
	for _, c := range compare(a, b) {
		if fs, ok := st[c.path]; ok && (fs.Worktree != git.Unmodified && fs.Worktree != git.Untracked || fs.Staging != git.Unmodified && fs.Staging != git.Untracked) {
			blocked = append(blocked, c.path)
		}
	}
	if len(blocked) > 0 {
		return &exitError{code: 1, msg: "error: Your local changes to the following files would be overwritten by checkout:\n\t" +
			strings.Join(blocked, "\n\t") + "\nPlease commit your changes or stash them before you switch branches.\nAborting"}
	}
	return rp.wt.Checkout(&git.CheckoutOptions{Branch: ref.Name()})
}

// restorePaths writes files back from the index (git checkout -- PATH).
func restorePaths(rp *repo, specs []string) error {
	idx, err := indexSnapshot(rp)
	if err != nil {
		return err
	}
	for _, spec := range specs {
		rel, err := rp.rel(spec)
		if err != nil {
			return err
		}
		matched := false
		for _, p := range slices.Sorted(mapKeys(idx)) {
			if rel != "." && p != rel && !strings.HasPrefix(p, rel+"/") {
				continue
			}
			matched = true
			ent := idx[p]
			data, err := ent.load()
			if err != nil {
				return err
			}
			full := filepath.Join(rp.root, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return err
			}
			perm := os.FileMode(0o644)
			if ent.mode == 0o100755 {
				perm = 0o755
			}
			_ = os.Remove(full)
			if err := os.WriteFile(full, data, perm); err != nil {
				return err
			}
		}
		if !matched {
			return &exitError{code: 1, msg: fmt.Sprintf("error: pathspec '%s' did not match any file(s) known to git", spec)}
		}
	}
	// git reports "Updated N paths from the index" on a terminal only.
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
