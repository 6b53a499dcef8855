package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// maxMessage bounds a commit message read from a file or stdin.
const maxMessage = 1 << 20

// readMessageFile is -F FILE ("-" is stdin).
func readMessageFile(name string) (string, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", fatalf("could not read log file '%s': %s", name, errText(err))
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxMessage+1))
	if err != nil {
		return "", fatalf("could not read log file '%s': %s", name, errText(err))
	}
	if len(b) > maxMessage {
		return "", fatalf("%s: commit message too long", name)
	}
	return string(b), nil
}

// editMessage runs the user's editor on the prepared message, as git
// does, and returns the edited message with comment lines stripped. The
// editor is GIT_EDITOR, core.editor, VISUAL or EDITOR; none at all on a
// dumb or absent terminal fails as git does, and so does an editor that
// cannot be run or fails. "true" and ":" (GIT_EDITOR=true, as scripts use
// to keep a message) leave the message as it is without starting
// anything.
func editMessage(e *env, rp *repo, prepared string) (string, error) {
	return editFile(e, rp, "COMMIT_EDITMSG", prepared+"\n# Please enter the commit message for your changes. Lines starting\n"+
		"# with '#' will be ignored, and an empty message aborts the commit.\n")
}

// editFile writes text to .git/NAME, runs the editor on it and reads
// it back, stripped.
func editFile(e *env, rp *repo, name, text string) (string, error) {
	editor := e.getenv("GIT_EDITOR")
	if editor == "" {
		editor = configValue(rp, "core", "editor")
	}
	if editor == "" {
		editor = e.getenv("VISUAL")
	}
	if editor == "" {
		editor = e.getenv("EDITOR")
	}
	const supply = "Please supply the message using either -m or -F option."
	term := e.getenv("TERM")
	if editor == "" && (term == "" || term == "dumb") {
		return "", &exitError{code: 1, msg: "error: Terminal is dumb, but EDITOR unset\n" + supply}
	}
	if editor == "" {
		editor = "vi"
	}
	if editor == ":" || editor == "true" {
		return stripMessage(text), nil
	}
	file := filepath.Join(rp.gitDir(), name)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		return "", fatalf("could not write '%s': %s", file, errText(err))
	}
	argv, ok := editorArgv(e, editor, file)
	if !ok {
		// git reports a missing program named by a path from the child
		// it forked, as a fatal error.
		level := "error"
		if strings.Contains(editor, "/") {
			level = "fatal"
		}
		return "", &exitError{code: 1, msg: level + ": cannot run " + editor + ": No such file or directory\n" +
			"error: unable to start editor '" + editor + "'\n" + supply}
	}
	if code, err := runEditor(argv); err != nil || code != 0 {
		return "", &exitError{code: 1, msg: "error: There was a problem with the editor '" + editor + "'.\n" + supply}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fatalf("could not read '%s': %s", file, errText(err))
	}
	if len(b) > maxMessage {
		return "", fatalf("%s: commit message too long", name)
	}
	return stripMessage(string(b)), nil
}

// shellMeta are the characters that make git run an editor command
// through sh -c rather than directly (run-command's rule).
const shellMeta = "|&;<>()$`\\\"' \t\n*?[#~=%"

// editorArgv is the command line that runs editor on file: through
// /bin/sh when the editor needs a shell, else the program found in PATH
// (ok is false when there is none, which git reports as "cannot run").
func editorArgv(e *env, editor, file string) ([]string, bool) {
	if strings.ContainsAny(editor, shellMeta) {
		return []string{"/bin/sh", "-c", editor + ` "$@"`, editor, file}, true
	}
	if strings.Contains(editor, "/") {
		if _, err := os.Stat(editor); err != nil {
			return nil, false
		}
		return []string{editor, file}, true
	}
	for _, dir := range filepath.SplitList(e.getenv("PATH")) {
		p := filepath.Join(dir, editor)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return []string{p, file}, true
		}
	}
	return nil, false
}

// stripMessage is git's "strip" clean-up of an edited message: the
// whitespace clean-up, and lines starting with '#' dropped.
func stripMessage(msg string) string {
	var keep []string
	for _, l := range strings.Split(msg, "\n") {
		if !strings.HasPrefix(l, "#") {
			keep = append(keep, l)
		}
	}
	return cleanMessage([]string{strings.Join(keep, "\n")})
}

// stageTracked is commit -a: modified and deleted tracked files are
// staged; untracked files are left alone.
func stageTracked(rp *repo) error {
	// A conflicted path is tracked too: its worktree version resolves it
	// (or its absence deletes it), as git add -u does.
	un, err := unmergedPaths(rp)
	if err != nil {
		return err
	}
	if len(un) > 0 {
		if err := resolveConflicts(rp, nil, true); err != nil {
			return err
		}
		for _, p := range un {
			if _, err := os.Lstat(filepath.Join(rp.root, filepath.FromSlash(p))); err != nil {
				continue
			}
			if _, err := rp.wt.Add(p); err != nil {
				return err
			}
		}
	}
	st, err := rp.wt.Status()
	if err != nil {
		return err
	}
	for p, fs := range st {
		switch fs.Worktree {
		case git.Modified:
			if _, err := rp.wt.Add(p); err != nil {
				return err
			}
		case git.Deleted:
			if _, err := rp.wt.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// authorFromArg is commit --author: "Name <email>", or a pattern that
// picks the author of the newest commit whose author matches it, as git
// does.
func authorFromArg(rp *repo, arg string, when time.Time) (*object.Signature, error) {
	if i := strings.Index(arg, " <"); i > 0 && strings.HasSuffix(arg, ">") {
		return &object.Signature{Name: arg[:i], Email: arg[i+2 : len(arg)-1], When: when}, nil
	}
	fail := fatalf("--author '%s' is not 'Name <email>' and matches no existing author", arg)
	re, err := regexp.Compile(arg)
	if err != nil {
		return nil, fail
	}
	head, err := rp.head()
	if err != nil || head == nil {
		return nil, fail
	}
	w, err := newWalker(rp, []plumbing.Hash{head.Hash}, nil)
	if err != nil {
		return nil, err
	}
	for {
		c, err := w.next()
		if err != nil {
			return nil, err
		}
		if c == nil {
			return nil, fail
		}
		if re.MatchString(c.Author.Name + " <" + c.Author.Email + ">") {
			return &object.Signature{Name: c.Author.Name, Email: c.Author.Email, When: when}, nil
		}
	}
}

// trailerLine matches a "Token: value" trailer such as Signed-off-by.
var trailerLine = regexp.MustCompile(`^[A-Za-z0-9-]+: `)

// addSignoff appends "Signed-off-by: committer", in the message's
// trailer block if it ends with one, else after a blank line; a message
// already ending with the same line is left alone.
func addSignoff(msg string, who *object.Signature) string {
	line := "Signed-off-by: " + who.Name + " <" + who.Email + ">"
	body := strings.TrimRight(msg, "\n")
	paras := strings.Split(body, "\n\n")
	last := strings.Split(paras[len(paras)-1], "\n")
	if last[len(last)-1] == line {
		return msg
	}
	trailers := len(paras) > 1
	for _, l := range last {
		if !trailerLine.MatchString(l) {
			trailers = false
		}
	}
	if trailers {
		return body + "\n" + line + "\n"
	}
	if body == "" {
		return "\n" + line + "\n"
	}
	return body + "\n\n" + line + "\n"
}

// checkNotEmpty fails as git does when the index records the same tree
// as the commit the new one would follow: the status for a new commit,
// "No changes" and the amend advice for --amend.
func checkNotEmpty(e *env, rp *repo, head *object.Commit, amend bool) error {
	base := head
	if amend {
		base = nil
		if len(head.ParentHashes) > 0 {
			p, err := rp.r.CommitObject(head.ParentHashes[0])
			if err != nil {
				return err
			}
			base = p
		}
	}
	tree, err := treeSnapshot(rp, base)
	if err != nil {
		return err
	}
	idx, err := indexSnapshot(rp)
	if err != nil {
		return err
	}
	if len(compare(tree, idx)) > 0 || (base == nil && len(idx) > 0) {
		return nil
	}
	if !amend {
		s, err := readState(rp)
		if err != nil {
			return err
		}
		// git commit words the status of an unborn branch differently
		// from git status.
		var b strings.Builder
		s.writeLong(&b, rp)
		fmt.Fprint(e.stdout, strings.Replace(b.String(), "\nNo commits yet\n", "\nInitial commit\n", 1))
		return &exitError{code: 1}
	}
	// The status, its closing advice replaced by "No changes".
	st, err := readState(rp)
	if err != nil {
		return err
	}
	var b strings.Builder
	st.writeLong(&b, rp)
	text := strings.TrimSuffix(b.String(), "\n")
	text = text[:strings.LastIndexByte(text, '\n')+1]
	if base == nil {
		first, rest, _ := strings.Cut(text, "\n")
		text = first + "\n\nInitial commit\n\n" + rest
	}
	fmt.Fprint(e.stdout, text)
	fmt.Fprintln(e.stdout, "No changes")
	return &exitError{code: 1, msg: "You asked to amend the most recent commit, but doing so would make\n" +
		"it empty. You can repeat your command with --allow-empty, or you can\n" +
		"remove the commit entirely with \"git reset HEAD^\"."}
}
