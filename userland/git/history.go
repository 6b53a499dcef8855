package main

// The history commands register here rather than in main.go's table, so
// that work on other commands and on these does not touch the same lines.
func init() {
	commands["merge"] = cmdMerge
	commands["stash"] = cmdStash
	commands["cherry-pick"] = cmdCherryPick
	commands["revert"] = cmdRevert
	commands["rebase"] = cmdRebase
	commands["apply"] = cmdApply
}
