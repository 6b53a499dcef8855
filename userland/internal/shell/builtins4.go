package shell

import (
	"maps"
	"path"
	"slices"
	"strings"
)

// enable lists, disables (-n) and re-enables builtins. A disabled
// builtin is looked up as a program, as in bash.
func (s *Shell) enable(args []string) int {
	all, disable := false, false
	var names []string
	for _, a := range args[1:] {
		if len(names) == 0 && strings.HasPrefix(a, "-") && a != "-" {
			for _, c := range a[1:] {
				switch c {
				case 'a':
					all = true
				case 'n':
					disable = true
				case 'p', 's':
				default:
					s.berr("enable", "-%c: invalid option", c)
					s.out(2, "enable: usage: "+builtinHelp["enable"][0]+"\n")
					return 2
				}
			}
			continue
		}
		names = append(names, a)
	}
	if len(names) == 0 {
		for _, n := range slices.Sorted(maps.Keys(builtins)) {
			switch {
			case s.disabled[n] && (all || disable):
				s.out(1, "enable -n "+n+"\n")
			case !s.disabled[n] && !disable:
				s.out(1, "enable "+n+"\n")
			}
		}
		return 0
	}
	status := 0
	for _, n := range names {
		if builtins[n] == nil {
			s.berr("enable", "%s: not a shell builtin", n)
			status = 1
			continue
		}
		if disable {
			if s.disabled == nil {
				s.disabled = map[string]bool{}
			}
			s.disabled[n] = true
		} else {
			delete(s.disabled, n)
		}
	}
	return status
}

// help prints the synopsis and summary of the builtins matching each
// pattern (-s: synopsis only; -d: summary only).
func (s *Shell) help(args []string) int {
	short, desc := false, false
	var pats []string
	for _, a := range args[1:] {
		if len(pats) == 0 && strings.HasPrefix(a, "-") && len(a) > 1 {
			for _, c := range a[1:] {
				switch c {
				case 's':
					short = true
				case 'd':
					desc = true
				case 'm':
				default:
					s.berr("help", "-%c: invalid option", c)
					s.out(2, "help: usage: "+builtinHelp["help"][0]+"\n")
					return 2
				}
			}
			continue
		}
		pats = append(pats, a)
	}
	names := slices.Sorted(maps.Keys(builtinHelp))
	if len(pats) == 0 {
		for _, n := range names {
			s.out(1, builtinHelp[n][0]+"\n")
		}
		return 0
	}
	status := 0
	for _, p := range pats {
		found := false
		for _, n := range names {
			if ok, _ := path.Match(p, n); !ok && n != p {
				continue
			}
			found = true
			h := builtinHelp[n]
			switch {
			case short:
				s.out(1, n+": "+h[0]+"\n")
			case desc:
				s.out(1, n+" - "+h[1]+"\n")
			default:
				s.out(1, n+": "+h[0]+"\n    "+h[1]+"\n")
			}
		}
		if !found {
			s.berr("help", "no help topics match `%s'.  Try `help help' or `man -k %s' or `info %s'.", p, p, p)
			status = 1
		}
	}
	return status
}

// builtinHelp is each builtin's synopsis (as bash 5.2's help -s gives it)
// and a summary.
var builtinHelp = map[string][2]string{
	":":         {":", "Do nothing, successfully."},
	"true":      {"true", "Succeed."},
	"false":     {"false", "Fail."},
	"echo":      {"echo [-neE] [arg ...]", "Print the arguments."},
	"printf":    {"printf [-v var] format [arguments]", "Print the arguments as the format says."},
	"cd":        {"cd [-L|[-P [-e]] [-@]] [dir]", "Change the working directory."},
	"pwd":       {"pwd [-LP]", "Print the working directory."},
	"exit":      {"exit [n]", "Leave the shell."},
	"return":    {"return [n]", "Leave a function or sourced file."},
	"break":     {"break [n]", "Leave a loop."},
	"continue":  {"continue [n]", "Start a loop's next round."},
	"shift":     {"shift [n]", "Drop positional parameters."},
	"set":       {"set [-abefhkmnptuvxBCEHPT] [-o option-name] [--] [-] [arg ...]", "Set options or positional parameters."},
	"unset":     {"unset [-f] [-v] [-n] [name ...]", "Remove variables or functions."},
	"export":    {"export [-fn] [name[=value] ...] or export -p", "Pass variables (or functions) to programs."},
	"readonly":  {"readonly [-aAf] [name[=value] ...] or readonly -p", "Make variables unchangeable."},
	"local":     {"local [option] name[=value] ...", "Make variables local to a function."},
	"declare":   {"declare [-aAfFgiIlnrtux] [name[=value] ...] or declare -p [-aAfFilnrtux] [name ...]", "Set variables and their attributes."},
	"typeset":   {"typeset [-aAfFgiIlnrtux] name[=value] ... or typeset -p [-aAfFilnrtux] [name ...]", "Set variables and their attributes."},
	"eval":      {"eval [arg ...]", "Run the arguments as shell code."},
	"source":    {"source filename [arguments]", "Run a file in this shell."},
	".":         {". filename [arguments]", "Run a file in this shell."},
	"test":      {"test [expr]", "Evaluate a condition."},
	"[":         {"[ arg... ]", "Evaluate a condition."},
	"read":      {"read [-ers] [-a array] [-d delim] [-i text] [-n nchars] [-N nchars] [-p prompt] [-t timeout] [-u fd] [name ...]", "Read a line into variables."},
	"mapfile":   {"mapfile [-d delim] [-n count] [-O origin] [-s count] [-t] [-u fd] [-C callback] [-c quantum] [array]", "Read lines into an array."},
	"readarray": {"readarray [-d delim] [-n count] [-O origin] [-s count] [-t] [-u fd] [-C callback] [-c quantum] [array]", "Read lines into an array."},
	"trap":      {"trap [-lp] [[arg] signal_spec ...]", "Run code on signals and shell events."},
	"wait":      {"wait [-fn] [-p var] [id ...]", "Wait for jobs and give their status."},
	"kill":      {"kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]", "Signal processes or jobs."},
	"jobs":      {"jobs [-lnprs] [jobspec ...] or jobs -x command [args]", "List jobs."},
	"type":      {"type [-afptP] name [name ...]", "Tell what a name runs."},
	"command":   {"command [-pVv] command [arg ...]", "Run a command past functions, or tell what it runs."},
	"builtin":   {"builtin [shell-builtin [arg ...]]", "Run a builtin past functions."},
	"let":       {"let arg [arg ...]", "Evaluate arithmetic."},
	"getopts":   {"getopts optstring name [arg ...]", "Parse options."},
	"umask":     {"umask [-p] [-S] [mode]", "Show or set the file creation mask."},
	"ulimit":    {"ulimit [-SHacdfmnstuv] [limit]", "Show process resource limits (set only the core file size)."},
	"shopt":     {"shopt [-pqsu] [-o] [optname ...]", "Set shell options."},
	"exec":      {"exec [-cl] [-a name] [command [argument ...]] [redirection ...]", "Replace the shell with a program, or apply redirections for good."},
	"hash":      {"hash [-lr] [-p pathname] [-dt] [name ...]", "Remember where programs are."},
	"times":     {"times", "Print the time the shell and its children used."},
	"alias":     {"alias [-p] [name[=value] ... ]", "Define or list aliases."},
	"unalias":   {"unalias [-a] name [name ...]", "Remove aliases."},
	"disown":    {"disown [-h] [-ar] [jobspec ... | pid ...]", "Forget jobs."},
	"caller":    {"caller [expr]", "Tell where the current function was called from."},
	"pushd":     {"pushd [-n] [+N | -N | dir]", "Push a directory on the stack."},
	"popd":      {"popd [-n] [+N | -N]", "Pop a directory from the stack."},
	"dirs":      {"dirs [-clpv] [+N] [-N]", "List the directory stack."},
	"fg":        {"fg [job_spec]", "Bring a job to the foreground."},
	"bg":        {"bg [job_spec ...]", "Continue a job in the background."},
	"enable":    {"enable [-a] [-dnps] [-f filename] [name ...]", "Turn builtins on or off, or list them."},
	"help":      {"help [-dms] [pattern ...]", "Describe builtins."},
}
