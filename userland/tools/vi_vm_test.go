//go:build !wasip1

package main

import (
	"strings"
	"testing"
)

// exScripts are ex -s scripts and what they start from; each runs with
// the host's vim (Debian's vim-tiny or vim) and with this ex, and the
// printed lines, the status and the file afterwards must agree.
var exScripts = []string{
	`%s/o/0/g\nwq`,
	`%p`,
	`%s/zzz/y/\nwq`,
	`1,2j\n%p\nq!`,
	`foo\nq`,
	`foo\nwq`,
	`%nu\nq`,
	`1t.\nwq`,
	`1m$\nwq`,
	`set nu\n%p\nq`,
	`2d`,
	`2d\nwq`,
	`%s/t\\(.\\)/<\\1>/\n%p`,
	`3\ns/e/E/g\n.p\n$d\nx`,
	`/nomatch/d\n%p`,
	`g/o/s/o/O/\nw\nq`,
	`v/o/d\n%p\nq!`,
	`g/e/d\nwq`,
	`$a\nfour\nfive\n.\nwq`,
	`1i\nzero\n.\nwq`,
	`2c\nTWO\n.\nwq`,
	`0a\nfirst\n.\nwq`,
	`%s/^/> /\nwq`,
	`%s/$/;/\nwq`,
	`%s/\\w\\+/[&]/g\nwq`,
	`%s/o\\|e/X/g\nwq`,
	`%s#/#|#g\nwq`,
	`2,3s/[a-t]/\\u&/\nwq`,
	`%s/e\\+$/E/\nwq`,
	`1\nd\nd\nwq`,
	`$\n-1d\nwq`,
	`/two/,$d\nwq`,
	`2;+1d\nwq`,
	`%j\nwq`,
	`%s/o/\\r/g\nwq`,
	`2,1d\nwq`,
	`9d\nwq`,
	`%d\nwq`,
	`2y\n$pu\nwq`,
	`%g/^/m0\nwq`,
	`%norm Ax\nwq`,
	`%norm 0dw\nwq`,
	`2\nnorm ddp\nwq`,
	`w! new.txt\nq`,
	`%s/one/1/ | %s/two/2/\nwq`,
	`%>\nwq`,
	`g/t/normal! A!\nwq`,
	`%s/\\(t\\)\\(w\\)/\\2\\1/\nwq`,
	`%s/.*/\\U&/\nwq`,
	`$r e.txt\nwq`,
	`%s/x*/-/g\n%p\nq!`,
	`2\nk a\n1\n'a,$d\nwq`,
	`e! e.txt\n2d\nx`,
	`q!`,
	`2\n.,$s/\\v(\\w)/X/\nwq`,
}

func TestExScriptsLikeVim(t *testing.T) {
	needHost(t, "ex")
	files := fixture{"e.txt": "one\ntwo\nthree\n", "nonl.txt": "a\nb", "empty": "", "tabs.txt": "\ta b\n\t\tc\n"}
	var cases []diffCase
	for _, s := range exScripts {
		script := "printf '%b\\n' '" + strings.ReplaceAll(s, "'", `'\''`) + "' > cmds; ex -s e.txt < cmds; echo rc=$?; cat e.txt; cat new.txt 2>/dev/null; rm cmds"
		cases = append(cases, diffCase{files: files, script: script, tree: true})
	}
	for _, s := range []string{`wq`, `$a\nx\n.\nwq`, `%p\nq`} {
		for _, f := range []string{"nonl.txt", "empty", "tabs.txt", "missing"} {
			script := "printf '%b\\n' '" + s + "' > cmds; ex -s " + f + " < cmds; echo rc=$?; cat " + f + "; rm cmds"
			cases = append(cases, diffCase{files: files, script: script, tree: true})
		}
	}
	runDiff(t, cases)
}
