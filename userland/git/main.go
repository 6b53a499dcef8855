// Command git is secexec's git for the VM: the everyday local commands
// (init, add, commit, log, show, diff, status, branch, checkout, switch,
// restore, reset, rm, mv, tag, describe, blame, grep, rev-parse, config),
// the history ones (merge, stash, cherry-pick, revert, rebase, apply) and
// the remote ones (remote, clone, fetch, pull, push) on go-git, compiled
// to WASI (GOOS=wasip1) so it runs bounded like every guest program.
// Repositories are ordinary git repositories: objects, index and refs are
// read and written in git's formats, so a repository made by host git
// works here and the other way round, and a commit made with the same
// tree, author, committer, dates and message has the same hash.
//
// Output follows git 2.39 where scripts read it (log formats and
// --graph, show, diff and its stat formats, status --short/--porcelain,
// rev-parse, describe, blame, grep, merge and rebase messages), and
// revisions are parsed as git parses them (revision.go). The history
// commands share one three-way merge (merge3.go and xdiff.go, ports of
// git's xdiff merge and histogram diff; mergetree.go, after its "ort"
// strategy) and leave conflicts as git does: markers, index stages,
// MERGE_HEAD and the rest, so host git and this one can take over from
// each other. No pager is ever started; the editor is, as git starts it;
// the usage text lists the commands provided.
//
// Remotes (remote, clone, fetch, pull, push, ls-remote) work over local
// paths and file:// URLs (go-git's file transport, in this process) and
// over git's smart HTTP protocol, whose connections netconn makes: inside
// the VM the host's kernel makes them under the VM's network rules.
// ssh:// and git:// are not provided. A pull that is not a fast-forward
// merges with the history commands' merge (mergeInto).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	"init":        cmdInit,
	"add":         cmdAdd,
	"commit":      cmdCommit,
	"log":         cmdLog,
	"diff":        cmdDiff,
	"status":      cmdStatus,
	"branch":      cmdBranch,
	"checkout":    cmdCheckout,
	"rev-parse":   cmdRevParse,
	"config":      cmdConfig,
	"show":        cmdShow,
	"reset":       cmdReset,
	"restore":     cmdRestore,
	"rm":          cmdRm,
	"mv":          cmdMv,
	"switch":      cmdSwitch,
	"tag":         cmdTag,
	"describe":    cmdDescribe,
	"blame":       cmdBlame,
	"grep":        cmdGrep,
	"cat-file":    cmdCatFile,
	"ls-files":    cmdLsFiles,
	"clean":       cmdClean,
	"shortlog":    cmdShortlog,
	"merge":       cmdMerge,
	"stash":       cmdStash,
	"cherry-pick": cmdCherryPick,
	"revert":      cmdRevert,
	"rebase":      cmdRebase,
	"apply":       cmdApply,
	"remote":      cmdRemote,
	"clone":       cmdClone,
	"fetch":       cmdFetch,
	"pull":        cmdPull,
	"push":        cmdPush,
	"ls-remote":   cmdLsRemote,
}

func run(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	e := &env{stdout: stdout, stderr: stderr, getenv: getenv}
	args, code, done := globalOptions(args, stdout, stderr)
	if done {
		return code
	}
	for _, v := range []struct {
		flag *string
		name string
	}{{&gitDirFlag, "GIT_DIR"}, {&workTreeFlag, "GIT_WORK_TREE"}} {
		if d := getenv(v.name); *v.flag == "" && d != "" {
			if abs, err := filepath.Abs(d); err == nil {
				*v.flag = abs
			}
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

// globalUsage is git's synopsis, printed with a global option error.
const globalUsage = `usage: git [-v | --version] [-h | --help] [-C <path>] [-c <name>=<value>]
           [--exec-path[=<path>]] [--html-path] [--man-path] [--info-path]
           [-p | --paginate | -P | --no-pager] [--no-replace-objects] [--bare]
           [--git-dir=<path>] [--work-tree=<path>] [--namespace=<name>]
           [--super-prefix=<path>] [--config-env=<name>=<envvar>]
           <command> [<args>]
`

const usage = `usage: git [-C <path>] [-c <name>=<value>] [-P | --no-pager]
           [--git-dir=<path>] [--work-tree=<path>] <command> [<args>]

Commands provided in secexec:
   init       Create an empty Git repository
   add        Add file contents to the index
   commit     Record changes to the repository
   status     Show the working tree status
   log        Show commit logs
   show       Show various types of objects
   diff       Show changes between commits, commit and working tree, etc
   branch     List, create, or delete branches
   checkout   Switch branches or restore working tree files
   switch     Switch branches
   restore    Restore working tree files
   reset      Reset current HEAD to the specified state
   rm         Remove files from the working tree and from the index
   mv         Move or rename a file, a directory, or a symlink
   tag        Create, list, delete a tag object
   describe   Give an object a human readable name based on an available ref
   shortlog   Summarize 'git log' output
   blame      Show what revision and author last modified each line of a file
   grep       Print lines matching a pattern
   ls-files   Show information about files in the index and the working tree
   clean      Remove untracked files from the working tree
   cat-file   Provide contents or details of repository objects
   rev-parse  Pick out and massage parameters
   config     Get and set repository or global options
   merge      Join two development histories together
   stash      Stash the changes in a dirty working directory away
   cherry-pick Apply the changes introduced by an existing commit
   revert     Revert an existing commit
   rebase     Reapply commits on top of another base tip
   apply      Apply a patch to files and/or to the index
   remote     Manage set of tracked repositories
   clone      Clone a repository into a new directory
   fetch      Download objects and refs from another repository
   pull       Fetch from and integrate with another repository
   push       Update remote refs along with associated objects
   ls-remote  List references in a remote repository
`
