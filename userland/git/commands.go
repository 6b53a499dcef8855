package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-git/go-git/v6/plumbing/storer"
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

// cmdCommit: git commit [-q] [-a] [--allow-empty] -m MSG [-m MSG]...
func cmdCommit(e *env, args []string) error {
	args = expandShort(args, "m")
	var msgs []string
	all, quiet, allowEmpty, strip := false, false, false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-m" || a == "--message") && i+1 < len(args):
			msgs = append(msgs, args[i+1])
			i++
		case strings.HasPrefix(a, "--message="):
			msgs = append(msgs, strings.TrimPrefix(a, "--message="))
		case a == "-a" || a == "--all":
			all = true
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--allow-empty":
			allowEmpty = true
		case a == "--no-edit":
		case a == "--cleanup=strip" || a == "--cleanup=whitespace":
			strip = a == "--cleanup=strip"
		default:
			return usagef("error: unsupported option `%s'\nusage: git commit [-q] [-a] [--allow-empty] -m <msg>", a)
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	// A merge, cherry-pick or revert stopped by conflicts is concluded
	// here; without -m its prepared message is taken as is (there is no
	// editor in the VM: like --no-edit).
	pending, err := readPending(rp)
	if err != nil {
		return err
	}
	if len(msgs) == 0 && pending != nil {
		msgs = []string{pending.msg}
	}
	if len(msgs) == 0 {
		return fatalf("no commit message: use -m <msg> (there is no editor in this VM)")
	}
	if strip {
		msgs = []string{stripComments(strings.Join(msgs, "\n\n"))}
	}
	msg := cleanMessage(msgs)
	if msg == "" {
		return &exitError{code: 1, msg: "Aborting commit due to empty commit message."}
	}
	if un, err := unmergedPaths(rp); err != nil {
		return err
	} else if len(un) > 0 {
		for _, p := range un {
			fmt.Fprintf(e.stdout, "U\t%s\n", rp.display(p))
		}
		return unmergedError("Committing")
	}
	author, err := identity(e, rp, "AUTHOR")
	if err != nil {
		return err
	}
	if pending != nil && pending.author != nil {
		author = pending.author
	}
	committer, err := identity(e, rp, "COMMITTER")
	if err != nil {
		return err
	}
	parent, err := rp.head()
	if err != nil {
		return err
	}
	opts := &git.CommitOptions{All: all, AllowEmptyCommits: allowEmpty, Author: author, Committer: committer}
	if pending != nil && pending.merge && parent != nil {
		opts.Parents = append([]plumbing.Hash{parent.Hash}, pending.parents...)
		opts.AllowEmptyCommits = true
	}
	h, err := rp.wt.Commit(msg, opts)
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
	if pending != nil && pending.author != nil {
		// git shows the date of an author taken from another commit.
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
	changes := compare(a, b)
	ins, del := 0, 0
	for _, ch := range changes {
		var x, y []byte
		if ch.from != nil {
			if x, err = ch.from.load(); err != nil {
				return err
			}
		}
		if ch.to != nil {
			if y, err = ch.to.load(); err != nil {
				return err
			}
		}
		if isBinary(x) || isBinary(y) {
			continue
		}
		for _, o := range lineOps(string(x), string(y)) {
			switch o.kind {
			case '+':
				ins++
			case '-':
				del++
			}
		}
	}
	line := fmt.Sprintf(" %d %s changed", len(changes), plural(len(changes), "file", "files"))
	if ins > 0 || (ins == 0 && del == 0) {
		line += fmt.Sprintf(", %d %s(+)", ins, plural(ins, "insertion", "insertions"))
	}
	if del > 0 {
		line += fmt.Sprintf(", %d %s(-)", del, plural(del, "deletion", "deletions"))
	}
	fmt.Fprintln(e.stdout, line)
	for _, ch := range changes {
		switch {
		case ch.from == nil:
			fmt.Fprintf(e.stdout, " create mode %o %s\n", ch.to.mode, ch.path)
		case ch.to == nil:
			fmt.Fprintf(e.stdout, " delete mode %o %s\n", ch.from.mode, ch.path)
		case ch.from.mode != ch.to.mode:
			fmt.Fprintf(e.stdout, " mode change %o => %o %s\n", ch.from.mode, ch.to.mode, ch.path)
		}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// cmdLog: git log [--oneline] [-n N|-N|--max-count=N] [--format=F|--pretty=F] [REV].
func cmdLog(e *env, args []string) error {
	max := -1
	format := ""
	rev := "HEAD"
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--oneline":
			format = "%h %s"
		case a == "-n" && i+1 < len(args):
			n, err := strconv.Atoi(args[i+1])
			if err != nil {
				return fatalf("'%s': not an integer", args[i+1])
			}
			max = n
			i++
		case strings.HasPrefix(a, "--max-count="):
			n, err := strconv.Atoi(strings.TrimPrefix(a, "--max-count="))
			if err != nil {
				return fatalf("'%s': not an integer", a)
			}
			max = n
		case len(a) > 1 && a[0] == '-' && isDigits(a[1:]):
			max, _ = strconv.Atoi(a[1:])
		case strings.HasPrefix(a, "--format=") || strings.HasPrefix(a, "--pretty="):
			f := a[strings.IndexByte(a, '=')+1:]
			f = strings.TrimPrefix(strings.TrimPrefix(f, "format:"), "tformat:")
			switch f {
			case "oneline":
				f = "%H %s"
			case "short", "medium", "full":
				f = ""
			}
			format = f
		case a == "--no-decorate":
		case strings.HasPrefix(a, "-"):
			return usagef("error: unsupported option `%s'", a)
		default:
			rev = a
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	var from *object.Commit
	if rev == "HEAD" {
		from, err = rp.head()
		if err == nil && from == nil {
			branch, _, _ := rp.branch()
			return fatalf("your current branch '%s' does not have any commits yet", branch)
		}
	} else {
		from, err = rp.resolveCommit(rev)
	}
	if err != nil {
		return err
	}
	iter, err := rp.r.Log(&git.LogOptions{From: from.Hash, Order: git.LogOrderCommitterTime})
	if err != nil {
		return err
	}
	n := 0
	err = iter.ForEach(func(c *object.Commit) error {
		if max >= 0 && n >= max {
			return storer.ErrStop
		}
		if format != "" {
			fmt.Fprintln(e.stdout, expandFormat(format, c))
		} else {
			if n > 0 {
				fmt.Fprintln(e.stdout)
			}
			fmt.Fprintf(e.stdout, "commit %s\n", c.Hash)
			if len(c.ParentHashes) > 1 {
				var ps []string
				for _, p := range c.ParentHashes {
					ps = append(ps, short(p))
				}
				fmt.Fprintf(e.stdout, "Merge: %s\n", strings.Join(ps, " "))
			}
			fmt.Fprintf(e.stdout, "Author: %s <%s>\nDate:   %s\n\n", c.Author.Name, c.Author.Email, gitDate(c.Author))
			for _, l := range strings.Split(strings.TrimRight(c.Message, "\n"), "\n") {
				if l == "" {
					fmt.Fprintln(e.stdout)
				} else {
					fmt.Fprintf(e.stdout, "    %s\n", l)
				}
			}
		}
		n++
		return nil
	})
	return err
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

// gitDate is git's default date format, in the signature's own zone.
func gitDate(s object.Signature) string { return s.When.Format("Mon Jan 2 15:04:05 2006 -0700") }

// expandFormat expands the --format placeholders scripts use.
func expandFormat(f string, c *object.Commit) string {
	subject, body, _ := strings.Cut(c.Message, "\n")
	body = strings.TrimLeft(body, "\n")
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		two := ""
		if i+1 < len(f) {
			two = f[i : i+2]
		}
		switch {
		case f[i] == 'H':
			b.WriteString(c.Hash.String())
		case f[i] == 'h':
			b.WriteString(short(c.Hash))
		case f[i] == 'T':
			b.WriteString(c.TreeHash.String())
		case f[i] == 't':
			b.WriteString(short(c.TreeHash))
		case f[i] == 'P' || f[i] == 'p':
			var ps []string
			for _, p := range c.ParentHashes {
				if f[i] == 'P' {
					ps = append(ps, p.String())
				} else {
					ps = append(ps, short(p))
				}
			}
			b.WriteString(strings.Join(ps, " "))
		case f[i] == 's':
			b.WriteString(subject)
		case f[i] == 'b':
			b.WriteString(body)
		case f[i] == 'B':
			b.WriteString(c.Message)
		case f[i] == 'n':
			b.WriteByte('\n')
		case f[i] == '%':
			b.WriteByte('%')
		case two != "" && (two[0] == 'a' || two[0] == 'c'):
			sig := c.Author
			if two[0] == 'c' {
				sig = c.Committer
			}
			switch two[1] {
			case 'n':
				b.WriteString(sig.Name)
			case 'e':
				b.WriteString(sig.Email)
			case 'd':
				b.WriteString(gitDate(sig))
			case 't':
				b.WriteString(strconv.FormatInt(sig.When.Unix(), 10))
			case 'i':
				b.WriteString(sig.When.Format("2006-01-02 15:04:05 -0700"))
			case 'I':
				b.WriteString(sig.When.Format("2006-01-02T15:04:05-07:00"))
			default:
				b.WriteString("%" + two)
			}
			i++
		default:
			b.WriteByte('%')
			b.WriteByte(f[i])
		}
	}
	return b.String()
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
				return nil
			}
			if err := switchTo(rp, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "Switched to branch '%s'\n", args[0])
			return nil
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

// cmdRevParse: git rev-parse [--short] [--abbrev-ref] [--show-toplevel] REV...
func cmdRevParse(e *env, args []string) error {
	rp, err := openRepo()
	if err != nil {
		return err
	}
	abbrev, shortHash := false, false
	for _, a := range args {
		switch a {
		case "--short":
			shortHash = true
		case "--abbrev-ref":
			abbrev = true
		case "--show-toplevel":
			fmt.Fprintln(e.stdout, rp.root)
		case "--git-dir":
			fmt.Fprintln(e.stdout, rp.gitDir())
		case "--is-inside-work-tree":
			fmt.Fprintln(e.stdout, "true")
		default:
			if strings.HasPrefix(a, "-") {
				return usagef("error: unsupported option `%s'", a)
			}
			if abbrev && a == "HEAD" {
				cur, attached, err := rp.branch()
				if err != nil {
					return err
				}
				if !attached {
					cur = "HEAD"
				}
				fmt.Fprintln(e.stdout, cur)
				continue
			}
			h, err := rp.r.ResolveRevision(plumbing.Revision(a))
			if err != nil {
				return fatalf("ambiguous argument '%s': unknown revision or path not in the working tree.", a)
			}
			if shortHash {
				fmt.Fprintln(e.stdout, short(*h))
			} else {
				fmt.Fprintln(e.stdout, h.String())
			}
		}
	}
	return nil
}
