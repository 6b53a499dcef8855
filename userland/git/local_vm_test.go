//go:build !wasip1

package main

import (
	"testing"

	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
)

// These differential tests cover the everyday local commands beyond the
// first set: each script runs under host git 2.39.5 and in the VM, and
// stdout, stderr and the exit status must be identical (hashes included,
// as author, committer and dates are fixed by identityEnv).

func TestGitGlobalOptionsMatchHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h,
		"git init -q -b main repo && echo one > repo/f && git -C repo add f",
		// -c overrides the identity for one run, as a script would use it.
		"git -c user.name=Grace -c user.email=grace@example.com -c core.x=1 config user.name && "+
			"env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL git -c user.name=Grace -c user.email=grace@example.com commit -q -m first && git log --format='%an <%ae> %cn %H'",
		"git -c foo.bar=baz config foo.bar && git -c Foo.Sub.Key=v config foo.Sub.key",
		"git --no-pager log --oneline && git -P log --oneline && git -p status --short",
		"cd .. && git -C repo --no-pager rev-parse HEAD && git --git-dir=repo/.git --work-tree=repo status --short && git --git-dir repo/.git log --format=%s",
		"git -c nokey=1 status",
		"git -c",
		"git --bogus",
		"git -C",
		"git -C /nonexistent status",
	)
}
