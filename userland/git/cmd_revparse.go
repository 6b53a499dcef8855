package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v6/plumbing"
)

// localEnvVars is what git rev-parse --local-env-vars prints.
var localEnvVars = []string{"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
	"GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_INDEX_FILE",
	"GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX", "GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR"}

// cmdRevParse: git rev-parse [options] [<rev>...]: revisions (and
// ranges) as hashes, and the repository facts scripts ask it for.
func cmdRevParse(e *env, args []string) error {
	for _, a := range args {
		if a == "--local-env-vars" {
			fmt.Fprintln(e.stdout, strings.Join(localEnvVars, "\n"))
			return nil
		}
	}
	rp, err := openRepo()
	if err != nil {
		return err
	}
	abbrevRef, symbolicFull, symbolic, verify, quiet := false, false, false, false, false
	shortLen, verified := 0, 0
	pending, pendingFlags := "", revParseFlags{}
	say := func(s string) { fmt.Fprintln(e.stdout, s) }
	relTo := func(p string) string {
		if r, err := filepath.Rel(rp.cwd, p); err == nil {
			return r
		}
		return p
	}
	prefix, _ := filepath.Rel(rp.root, rp.cwd)
	prefix = filepath.ToSlash(prefix)
	// Arguments are handled in order, as git does: an option applies to
	// the revisions after it.
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--verify":
			verify = true
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--short":
			shortLen, verify = 7, true
		case strings.HasPrefix(a, "--short="):
			n, err := strconv.Atoi(strings.TrimPrefix(a, "--short="))
			if err != nil {
				return fatalf("--short requires a number")
			}
			shortLen, verify = max(4, min(n, 40)), true
		case a == "--abbrev-ref" || a == "--abbrev-ref=strict" || a == "--abbrev-ref=loose":
			abbrevRef = true
		case a == "--symbolic-full-name":
			symbolicFull = true
		case a == "--symbolic":
			symbolic = true
		case a == "--show-toplevel":
			say(rp.root)
		case a == "--show-prefix":
			if prefix == "." {
				say("")
			} else {
				say(prefix + "/")
			}
		case a == "--show-cdup":
			if prefix == "." {
				say("")
			} else {
				say(strings.Repeat("../", strings.Count(prefix, "/")+1))
			}
		case a == "--git-dir":
			// Relative at the top of the worktree, absolute below it.
			if rp.cwd == rp.root {
				say(relTo(rp.gitDir()))
			} else {
				say(rp.gitDir())
			}
		case a == "--absolute-git-dir":
			say(rp.gitDir())
		case a == "--git-common-dir":
			say(relTo(rp.gitDir()))
		case a == "--git-path" && i+1 < len(args):
			say(relTo(filepath.Join(rp.gitDir(), args[i+1])))
			i++
		case a == "--is-inside-work-tree":
			say("true")
		case a == "--is-inside-git-dir", a == "--is-bare-repository", a == "--is-shallow-repository":
			say("false")
		case a == "--sq-quote":
			var q []string
			for _, s := range args[i+1:] {
				q = append(q, " '"+strings.ReplaceAll(s, "'", `'\''`)+"'")
			}
			say(strings.Join(q, ""))
			return nil
		case a == "--":
			if !verify {
				say("--")
			}
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-":
			// git passes options it does not know through.
			say(a)
		default:
			f := revParseFlags{abbrevRef, symbolicFull, symbolic, verify, quiet, shortLen}
			if verify {
				// --verify prints its one revision at the end.
				if verified++; verified > 1 {
					if quiet {
						return &exitError{code: 1}
					}
					return fatalf("Needed a single revision")
				}
				pending, pendingFlags = a, f
				continue
			}
			if err := revParseOne(e, rp, a, f); err != nil {
				return err
			}
		}
	}
	if verify && verified == 0 {
		if quiet {
			return &exitError{code: 1}
		}
		return fatalf("Needed a single revision")
	}
	if verified == 1 {
		pendingFlags.verify = true
		return revParseOne(e, rp, pending, pendingFlags)
	}
	return nil
}

// revParseFlags are the rev-parse options in force for a revision.
type revParseFlags struct {
	abbrevRef, symbolicFull, symbolic, verify, quiet bool
	shortLen                                         int
}

// revParseOne prints one revision (or range) as rev-parse does.
func revParseOne(e *env, rp *repo, a string, f revParseFlags) error {
	if !f.verify {
		if r := parseRange(a); r.dots == 2 || r.negative {
			to, err := resolveRevision(rp, r.to)
			if err != nil {
				return revParseError(e, a, err)
			}
			if r.negative {
				fmt.Fprintln(e.stdout, "^"+to.String())
				return nil
			}
			from, err := resolveRevision(rp, r.from)
			if err != nil {
				return revParseError(e, a, err)
			}
			fmt.Fprintf(e.stdout, "%s\n^%s\n", to, from)
			return nil
		}
	}
	if f.abbrevRef || f.symbolicFull {
		name, ok, err := refNameOf(rp, a)
		if err != nil {
			return err
		}
		if ok {
			if f.abbrevRef {
				name = shortRefName(name)
			}
			fmt.Fprintln(e.stdout, name)
			return nil
		}
		if a == "HEAD" || a == "@" {
			fmt.Fprintln(e.stdout, "HEAD")
			return nil
		}
	}
	h, err := resolveRevision(rp, a)
	if err != nil {
		if f.verify {
			if f.quiet {
				return &exitError{code: 1}
			}
			return fatalf("Needed a single revision")
		}
		return revParseError(e, a, err)
	}
	switch {
	case f.symbolic:
		fmt.Fprintln(e.stdout, a)
	case f.shortLen > 0:
		fmt.Fprintln(e.stdout, h.String()[:f.shortLen])
	default:
		fmt.Fprintln(e.stdout, h.String())
	}
	return nil
}

// revParseError is rev-parse's failure: like git, it echoes the
// argument before an unknown revision's error.
func revParseError(e *env, a string, err error) error {
	if msg := err.Error(); strings.Contains(msg, "ambiguous argument") || strings.Contains(msg, "does not exist") {
		fmt.Fprintln(e.stdout, a)
	}
	return err
}

// refNameOf is the full ref a revision names, if it names one: HEAD's
// branch, a branch, tag or remote-tracking branch, or NAME@{upstream}.
func refNameOf(rp *repo, spec string) (string, bool, error) {
	if spec == "@" {
		spec = "HEAD"
	}
	if i := strings.Index(spec, "@{"); i >= 0 && strings.HasSuffix(spec, "}") {
		at := strings.ToLower(spec[i+2 : len(spec)-1])
		if at == "u" || at == "upstream" {
			ref, err := upstream(rp, spec[:i])
			if err != nil {
				return "", false, err
			}
			return ref.String(), true, nil
		}
		return "", false, nil
	}
	if spec == "HEAD" {
		cur, attached, err := rp.branch()
		if err != nil || !attached {
			return "", false, err
		}
		return plumbing.NewBranchReferenceName(cur).String(), true, nil
	}
	if ref, _, ok := lookupRef(rp, spec); ok && ref != plumbing.HEAD {
		return ref.String(), true, nil
	}
	return "", false, nil
}

// shortRefName is a full ref's short name, as --abbrev-ref prints it.
func shortRefName(name string) string {
	for _, p := range []string{"refs/heads/", "refs/tags/", "refs/remotes/"} {
		if s, ok := strings.CutPrefix(name, p); ok {
			return s
		}
	}
	return strings.TrimPrefix(name, "refs/")
}
