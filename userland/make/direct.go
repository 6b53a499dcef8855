package main

import "strings"

// shellSpecial are the characters that make GNU make hand a command to
// the shell instead of running it directly.
const shellSpecial = "#;\"*?[]&|<>(){}$`^~!'\\\n="

// shellWords are GNU make's list of shell built-ins and keywords: a
// command starting with one needs the shell.
var shellWords = map[string]bool{
	".": true, ":": true, "alias": true, "bg": true, "break": true, "case": true, "cd": true,
	"command": true, "continue": true, "eval": true, "exec": true, "exit": true, "export": true,
	"fc": true, "fg": true, "for": true, "getopts": true, "hash": true, "if": true, "jobs": true,
	"login": true, "logout": true, "read": true, "readonly": true, "return": true, "set": true,
	"shift": true, "test": true, "times": true, "trap": true, "type": true, "ulimit": true,
	"umask": true, "unalias": true, "unset": true, "wait": true, "while": true,
	// Not in GNU's list: the VM may have no /usr/bin/[, and its shell
	// has the built-in.
	"[": true,
}

// directArgv returns the argv of a command that needs no shell (GNU
// make's fast path: no special characters, no shell keyword first).
func directArgv(cmd string) ([]string, bool) {
	if strings.ContainsAny(cmd, shellSpecial) {
		return nil, false
	}
	w := strings.FieldsFunc(cmd, func(r rune) bool { return r == ' ' || r == '\t' })
	if len(w) == 0 || shellWords[w[0]] {
		return nil, false
	}
	return w, true
}
