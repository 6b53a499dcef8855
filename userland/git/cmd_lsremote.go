package main

import (
	gocontext "context"
	"errors"
	"fmt"
	"slices"
	"strings"

	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/config"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/transport"
)

// cmdLsRemote: git ls-remote [--heads|-h] [--tags|-t] [-q] [REMOTE [PATTERN...]].
func cmdLsRemote(e *env, args []string) error {
	heads, tags, quiet := false, false, false
	var rest []string
	for _, a := range args {
		switch a {
		case "--heads", "-h", "--branches", "-b":
			heads = true
		case "--tags", "-t":
			tags = true
		case "-q", "--quiet":
			quiet = true
		default:
			if strings.HasPrefix(a, "-") && len(a) > 1 {
				return usagef("error: unknown option `%s'\nusage: git ls-remote [--heads] [--tags] [-q] [<repository> [<patterns>...]]", strings.TrimLeft(a, "-"))
			}
			rest = append(rest, a)
		}
	}
	var u string
	if len(rest) > 0 && (isURL(rest[0]) || localPath(rest[0]) != "") {
		if err := checkScheme(rest[0]); err != nil {
			return err
		}
		u = rest[0]
		rest = rest[1:]
	} else {
		rp, err := openRepo()
		if err != nil {
			if len(rest) > 0 {
				return fatalf("'%s' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.", rest[0])
			}
			return fatalf("No remote configured to list refs from.")
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
		_, ru, _, err := resolveRemote(rp, remote)
		if err != nil {
			if len(args) == 0 {
				return fatalf("No remote configured to list refs from.")
			}
			return err
		}
		if len(args) == 0 && !quiet {
			fmt.Fprintf(e.stderr, "From %s\n", displayURL(ru))
		}
		u = ru
	}
	if err := checkScheme(u); err != nil {
		return err
	}
	rem := git.NewRemote(nil, &config.RemoteConfig{Name: "anonymous", URLs: []string{u}})
	list, err := rem.ListContext(gocontext.Background(), &git.ListOptions{ClientOptions: clientOptions(), PeelingOption: git.AppendPeeled})
	if err != nil && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return transportError(u, err)
	}
	hashes := map[plumbing.ReferenceName]plumbing.Hash{}
	for _, r := range list {
		if r.Type() == plumbing.HashReference {
			hashes[r.Name()] = r.Hash()
		}
	}
	type line struct {
		name string
		hash plumbing.Hash
	}
	var lines []line
	for _, r := range list {
		n := r.Name().String()
		base := strings.TrimSuffix(n, "^{}")
		if !validRemoteRef(plumbing.ReferenceName(base)) {
			continue
		}
		h := r.Hash()
		if r.Type() == plumbing.SymbolicReference {
			if h = hashes[r.Target()]; h.IsZero() {
				continue
			}
		}
		switch {
		case (heads || tags) && n == "HEAD":
			continue
		case heads && !tags && !strings.HasPrefix(n, "refs/heads/"):
			continue
		case tags && !heads && !strings.HasPrefix(n, "refs/tags/"):
			continue
		}
		if len(rest) > 0 && !slices.ContainsFunc(rest, func(p string) bool { return refTailMatch(n, p) }) {
			continue
		}
		lines = append(lines, line{n, h})
	}
	// HEAD first, then by name, each peeled tag after its tag.
	slices.SortStableFunc(lines, func(a, b line) int {
		if (a.name == "HEAD") != (b.name == "HEAD") {
			if a.name == "HEAD" {
				return -1
			}
			return 1
		}
		if c := strings.Compare(strings.TrimSuffix(a.name, "^{}"), strings.TrimSuffix(b.name, "^{}")); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	for _, l := range lines {
		fmt.Fprintf(e.stdout, "%s\t%s\n", l.hash, l.name)
	}
	return nil
}

// refTailMatch is ls-remote's pattern match: the pattern equals the
// ref's name or a tail of it that starts at a "/".
func refTailMatch(name, pattern string) bool {
	return name == pattern || strings.HasSuffix(name, "/"+pattern)
}
