package main

import (
	"errors"
	"io"
	"os"
	"strings"

	git "github.com/go-git/go-git/v6"
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

// editMessage stands in for git's editor. Programs cannot be started
// from git in the VM, so: an editor of "true" or ":" (GIT_EDITOR=true,
// as scripts use to keep a message) leaves the prepared message as it
// is; no editor at all on a dumb or absent terminal fails as git does;
// any other editor fails as git does when the editor cannot be run.
func editMessage(e *env, rp *repo, prepared string) (string, error) {
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
		return stripMessage(prepared), nil
	}
	return "", &exitError{code: 1, msg: "error: cannot run " + editor + ": No such file or directory\n" +
		"error: unable to start editor '" + editor + "'\n" + supply}
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
