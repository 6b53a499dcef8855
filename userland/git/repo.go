package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v6/osfs"
	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/cache"
	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-git/go-git/v6/storage/filesystem"
)

// repo is an open repository with its worktree.
type repo struct {
	r    *git.Repository
	wt   *git.Worktree
	root string // absolute worktree root
	dot  string // absolute git directory
	cwd  string // absolute working directory
}

// openRepo opens the repository containing the working directory: the
// nearest directory upwards with a .git directory.
func openRepo() (*repo, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	root, dotDir := cwd, gitDirFlag
	if dotDir != "" {
		// An explicit git directory: the worktree is --work-tree, or
		// the working directory, as in git.
		if fi, err := os.Stat(filepath.Join(dotDir, "HEAD")); err != nil || fi.IsDir() {
			return nil, fatalf("not a git repository: '%s'", dotDir)
		}
		if workTreeFlag != "" {
			root = workTreeFlag
		}
	} else {
		for {
			if fi, err := os.Stat(filepath.Join(root, ".git")); err == nil && fi.IsDir() {
				break
			}
			parent := filepath.Dir(root)
			if parent == root {
				return nil, fatalf("not a git repository (or any of the parent directories): .git")
			}
			root = parent
		}
		if workTreeFlag != "" {
			dotDir, root = filepath.Join(root, ".git"), workTreeFlag
		}
	}
	if dotDir == "" {
		dotDir = filepath.Join(root, ".git")
	}
	dot := osfs.New(dotDir, osfs.WithBoundOS())
	wtfs := worktreeFS(osfs.New(root, osfs.WithBoundOS()))
	r, err := git.Open(filesystem.NewStorage(dot, cache.NewObjectLRUDefault()), wtfs)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, fatalf("not a git repository (or any of the parent directories): .git")
	}
	if err != nil {
		return nil, err
	}
	wt, err := r.Worktree()
	if err != nil {
		return nil, err
	}
	return &repo{r: r, wt: wt, root: root, dot: dotDir, cwd: cwd}, nil
}

// rel turns a path given on the command line (relative to the working
// directory) into a slash path relative to the worktree root.
func (rp *repo) rel(p string) (string, error) {
	abs := p
	if !filepath.IsAbs(p) {
		abs = filepath.Join(rp.cwd, p)
	}
	r, err := filepath.Rel(rp.root, filepath.Clean(abs))
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", fatalf("%s: '%s' is outside repository at '%s'", p, p, rp.root)
	}
	return filepath.ToSlash(r), nil
}

// display turns a worktree path into one relative to the working
// directory, as git prints paths.
func (rp *repo) display(p string) string {
	r, err := filepath.Rel(rp.cwd, filepath.Join(rp.root, p))
	if err != nil {
		return p
	}
	if strings.HasSuffix(p, "/") {
		r += "/"
	}
	return filepath.ToSlash(r)
}

// head returns HEAD's commit, or nil before the first commit.
func (rp *repo) head() (*object.Commit, error) {
	ref, err := rp.r.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return rp.r.CommitObject(ref.Hash())
}

// branch returns the name of the branch HEAD points at, and whether HEAD
// is attached to one.
func (rp *repo) branch() (string, bool, error) {
	ref, err := rp.r.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", false, err
	}
	if ref.Type() == plumbing.SymbolicReference {
		return ref.Target().Short(), true, nil
	}
	return "", false, nil
}

// resolveCommit resolves a revision (see resolveRevision) to a commit.
func (rp *repo) resolveCommit(rev string) (*object.Commit, error) {
	return resolveCommitRevision(rp, rev)
}

// short abbreviates a hash as git does in a small repository.
func short(h plumbing.Hash) string { return h.String()[:7] }
