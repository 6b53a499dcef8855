// Command git is secexec's git for the VM: the everyday local commands
// (init, add, commit, log, diff, status, branch, checkout, rev-parse,
// config) and the history ones (merge, stash, cherry-pick, revert,
// rebase, apply) on go-git, compiled to WASI (GOOS=wasip1) so it runs
// bounded like every guest program. Repositories are ordinary git
// repositories:
// objects, index and refs are read and written in git's formats, so a
// repository made by host git works here and the other way round, and a
// commit made with the same tree, author, committer, dates and message
// has the same hash.
//
// Output follows git 2.39 where scripts read it (log formats, status
// --short/--porcelain, diff, rev-parse, merge and rebase messages). The
// history commands share one three-way merge (merge3.go and xdiff.go,
// ports of git's xdiff merge and histogram diff; mergetree.go, after
// its "ort" strategy without renames) and leave conflicts as git does:
// markers, index stages, MERGE_HEAD and the rest, so host git and this
// one can take over from each other. Remotes and the rest of git are
// not provided.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// exitError ends the command with a status after a message.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// fatalf is git's "fatal: ..." error, status 128.
func fatalf(format string, args ...any) error {
	return &exitError{code: 128, msg: "fatal: " + fmt.Sprintf(format, args...)}
}

// usagef is a usage error, status 129.
func usagef(format string, args ...any) error {
	return &exitError{code: 129, msg: fmt.Sprintf(format, args...)}
}

// env is what a command sees of its process: arguments aside.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

type command func(e *env, args []string) error

var commands = map[string]command{
	"init":      cmdInit,
	"add":       cmdAdd,
	"commit":    cmdCommit,
	"log":       cmdLog,
	"diff":      cmdDiff,
	"status":    cmdStatus,
	"branch":    cmdBranch,
	"checkout":  cmdCheckout,
	"rev-parse": cmdRevParse,
	"config":    cmdConfig,
}

func run(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	e := &env{stdout: stdout, stderr: stderr, getenv: getenv}
	// Global options before the command.
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch a := args[0]; {
		case a == "--version" || a == "version":
			fmt.Fprintln(stdout, "git version 2.39.5 (secexec, go-git)")
			return 0
		case a == "-h" || a == "--help":
			fmt.Fprint(stdout, usage)
			return 0
		case a == "-C" && len(args) > 1:
			if err := os.Chdir(args[1]); err != nil {
				fmt.Fprintf(stderr, "fatal: cannot change to '%s': %v\n", args[1], errText(err))
				return 128
			}
			args = args[2:]
			continue
		default:
			fmt.Fprintf(stderr, "unknown option: %s\n%s", a, usage)
			return 129
		}
	}
	if len(args) == 0 {
		fmt.Fprint(stdout, usage)
		return 1
	}
	if args[0] == "version" {
		fmt.Fprintln(stdout, "git version 2.39.5 (secexec, go-git)")
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "git: '%s' is not a git command supported here. See 'git --help'.\n", args[0])
		return 1
	}
	if err := cmd(e, args[1:]); err != nil {
		var xe *exitError
		if errors.As(err, &xe) {
			if xe.msg != "" {
				fmt.Fprintln(stderr, xe.msg)
			}
			return xe.code
		}
		fmt.Fprintln(stderr, "fatal: "+errText(err))
		return 128
	}
	return 0
}

// errText is an error's message without Go's wrapping noise.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

const usage = `usage: git [-C <path>] <command> [<args>]

Commands provided in secexec:
   init       Create an empty Git repository
   add        Add file contents to the index
   commit     Record changes to the repository
   log        Show commit logs
   diff       Show changes between commits, commit and working tree, etc
   status     Show the working tree status
   branch     List, create, or delete branches
   checkout   Switch branches or restore working tree files
   rev-parse  Pick out and massage parameters
   config     Get and set repository or global options
   merge      Join two development histories together
   stash      Stash the changes in a dirty working directory away
   cherry-pick Apply the changes introduced by an existing commit
   revert     Revert an existing commit
   rebase     Reapply commits on top of another base tip
   apply      Apply a patch to files and/or to the index
`
