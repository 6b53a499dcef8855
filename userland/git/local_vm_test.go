//go:build !wasip1

package main

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/secexec/secexec/internal/vm"
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

// compareOnHostRepo builds a repository with host git twice (setup runs
// in an empty directory and must make ./repo), mounts one copy into the
// VM, and runs each command in both copies' repo directory: host git on
// one, the VM's git on the other. It is for histories the VM's git
// cannot make yet (merges), and for commands that change the
// repository, whose later commands then see each side's own result.
func compareOnHostRepo(t *testing.T, setup string, cmds ...string) {
	t.Helper()
	hostDir, vmDir := t.TempDir(), t.TempDir()
	for _, d := range []string{hostDir, vmDir} {
		if o := hostSh(t, d, setup); o.code != 0 {
			t.Fatalf("setup: exit %d: %s%s", o.code, o.stdout, o.stderr)
		}
	}
	h := vmtest.NewHost(t, vmhost.Config{Mounts: []vm.Mount{{Path: "/mnt/host", HostDir: vmDir}}})
	for _, c := range cmds {
		want := hostSh(t, hostDir, "cd repo && "+c)
		got := vmSh(t, h, "cd /mnt/host/repo && "+c)
		if got != want {
			t.Fatalf("$ %s\nhost (exit %d):\n%s\n-- stderr:\n%s\nVM (exit %d):\n%s\n-- stderr:\n%s\nfirst difference: %s",
				c, want.code, want.stdout, want.stderr, got.code, got.stdout, got.stderr, firstDiff(want, got))
		}
	}
}

// mergeHistory is a small history with a tag, an annotated tag, a side
// branch merged back, and an upstream configured for main.
const mergeHistory = `git init -q -b main repo && cd repo &&
printf 'line1\nline2\nline3\n' > a.txt && mkdir -p src && printf 'package main\n\nfunc main() {\n\tprintln(1)\n}\n' > src/main.go &&
git add . && git commit -qm 'first commit' &&
printf 'line1\nline2 changed\nline3\nline4\n' > a.txt && echo new > b.txt && git add . && git commit -qm second -m 'a body paragraph' &&
git tag v1 && git tag -a -m 'release one' v1.1 &&
git checkout -q -b side HEAD~1 && echo s > s.txt && git add s.txt && git commit -qm 'side work' &&
git checkout -q main && GIT_COMMITTER_DATE=2024-01-03T03:04:05+01:00 git merge -q --no-edit side &&
echo more >> a.txt && GIT_COMMITTER_DATE=2024-01-04T03:04:05+01:00 git commit -qam 'after merge' &&
git branch feature HEAD~1 && git config branch.main.remote . && git config branch.main.merge refs/heads/feature`

func TestGitRevisionsMatchHost(t *testing.T) {
	compareOnHostRepo(t, mergeHistory,
		"git rev-parse HEAD~1^2 @ main@{u} @{upstream} v1.1 v1.1^{} v1.1^{commit} HEAD^{tree} HEAD:a.txt :a.txt HEAD~3 HEAD^ HEAD^^2 side~1^ :/side",
		"git rev-parse $(git rev-parse HEAD | cut -c1-7) $(git rev-parse HEAD~2 | cut -c1-10)",
		"git rev-parse nope",
		"git rev-parse --verify nope",
		"git rev-parse HEAD:nope",
		"git rev-parse HEAD~9",
		"git rev-parse side@{u}",
		"git log --oneline nope",
		"git log --oneline HEAD~1^2 -- a.txt", "git log --oneline HEAD~2^2 -- a.txt",
		"git log --oneline a.txt nope",
	)
}

func TestGitLogMatchesHost(t *testing.T) {
	compareOnHostRepo(t, mergeHistory,
		"git log", "git log --oneline", "git log -p", "git log --stat", "git log --shortstat --oneline",
		"git log --name-only", "git log --name-status --format=%s",
		"git log --graph", "git log --graph --oneline", "git log --graph --format=%s%n%b", "git log --graph -p",
		"git log --graph --stat --oneline", "git log --graph --all --oneline",
		"git log --oneline --decorate", "git log --all --oneline --decorate=short",
		"git log -n 2 --reverse --oneline", "git log -3 --skip=1 --format=%h",
		"git log --author=Ada --grep=side --oneline", "git log --grep=SIDE -i --format=%s", "git log --author=nobody",
		"git log --oneline -- s.txt", "git log --oneline a.txt", "git log --oneline -- src",
		"git log --oneline main..side", "git log --oneline side..main", "git log --oneline side...main", "git log --oneline ^side main",
		"git log --oneline @{u}", "git log --first-parent --oneline", "git log --no-merges --oneline", "git log --merges --format=%p",
		"git log --format='%h %d %D|%an|%ae|%cn|%s|%at|%ai|%as' --decorate",
		"git log --pretty=fuller -1", "git log --pretty=short -1", "git log --pretty=full -1", "git log --pretty=raw -1", "git log --date=iso -1",
		"git log --stat -p -1", "git log --oneline v1.1 -1",
		"git log --oneline -Sline4", "git log --oneline -S line2", "git log -p -S'line2 changed'", "git log --oneline -G'^line[0-9]$'",
		"git log --stat -Gnew", `git log --oneline -S'e\s*[0-9]' --pickaxe-regex`, "git log --oneline -Snope",
		"git log -p -Sline4 --pickaxe-all --format=%s", "git log --oneline -S", "git log --since=2024-01-03T12:00:00Z --format=%s", "git log --until='2024-01-03 12:00:00 +0000' --format=%s",
	)
}

func TestGitShowMatchesHost(t *testing.T) {
	compareOnHostRepo(t, mergeHistory,
		"git show", "git show HEAD~1", "git show --stat HEAD~2", "git show -s --format=%s v1.1", "git show v1.1",
		"git show v1.1 --stat", "git show --name-only HEAD~2", "git show --name-status HEAD~2 --oneline",
		"git show HEAD~2:a.txt", "git show HEAD:", "git show HEAD:src", "git show v1.1^{tree}", "git show :a.txt",
		"git show HEAD:nope", "git show nope", "git show --pretty=short -s", "git show --format='%H%n%P' -s HEAD~1",
		"git show HEAD~2 -- b.txt", "git show --no-patch --oneline HEAD HEAD~1", "git show HEAD~2 HEAD~3", "git show v1",
		"git show --stat HEAD~1", "git show --name-only HEAD~1", "git show --oneline HEAD~1",
	)
}

func TestGitDiffOptionsMatchHost(t *testing.T) {
	compareOnHostRepo(t, mergeHistory+" && printf 'x\\n' >> a.txt && echo staged > b.txt && git add b.txt && rm s.txt",
		"git diff", "git diff --stat", "git diff --name-only", "git diff --name-status", "git diff --cached",
		"git diff --staged --stat", "git diff HEAD", "git diff HEAD~2 HEAD", "git diff HEAD~2..HEAD --stat",
		"git diff side...main --name-status", "git diff HEAD -- a.txt", "git diff --quiet; echo $?",
		"git diff --exit-code --stat; echo $?", "git diff --quiet HEAD HEAD; echo $?", "git diff nope",
		"git diff HEAD~1 a.txt", "git diff --shortstat HEAD~3", "git diff --numstat HEAD~3", "git diff v1 v1.1", "git diff -- nope",
	)
}

// No editor can be started by git in the VM: without -m/-F it fails as
// host git does without a terminal and without EDITOR, or with an
// editor it cannot run; GIT_EDITOR=true keeps the prepared message.
func TestGitCommitMessagesMatchHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h,
		"git init -q -b main repo && cd repo && echo a > a && git add a && git commit -qm one && echo b > b && git add b && git commit -qm two",
		"echo c >> a && git add a && git commit",
		"EDITOR=nonexist git commit",
		"GIT_EDITOR=nonexist git -c core.editor=other commit",
		"GIT_EDITOR=: git commit",
		"git commit --amend -m 'two amended' && git log --format='%H %an %ad %cn %s'",
		"git commit --amend --no-edit && git log --format='%H %s' -1",
		"GIT_EDITOR=true git commit --amend && git log --stat -1",
		"printf '  msg from file\\n\\n\\nbody  \\n# not a comment\\n' > ../m && git commit --allow-empty -F ../m && git log -1 --format=%B",
		"echo dd >> a && printf 'from stdin\\n' | git commit -qa -F - && git log --oneline",
		"git commit --allow-empty -m e && git commit --amend --allow-empty --no-edit",
		"git commit -m x -F ../m",
		"git commit -F nofile",
		"rm a && git commit -a -m 'del a' && git log --oneline --stat -1",
		"git commit --amend -m 'would be empty'",
		// A real editor runs in the VM as it does on the host: through
		// sh when the command needs a shell, and its failure is git's.
		"echo e >> a && git add a && GIT_EDITOR='printf \"edited msg\\n\\nbody\\n# a comment\\n\" >' git commit && git log --format=%B -1",
		"GIT_EDITOR='f() { printf \"amended: %s\\n\" \"$(head -n 1 \"$1\")\" > \"$1\"; }; f' git commit --amend && git log --oneline -1",
		"GIT_EDITOR='exit 3;' git commit --amend",
		"EDITOR=/nonexist/ed git commit --amend",
		"GIT_EDITOR='printf \"tag message\\n\" >' git tag -a t1 && git rev-parse t1 && git tag -n",
	)
}

// worktreeHistory is three commits and local changes: a modified file
// (unstaged) and a staged one; the VM's git makes it as well as host's.
const worktreeHistory = "git init -q -b main repo && cd repo && printf 'a\\n' > a && printf 'b\\n' > b && mkdir d && echo x > d/x && echo y > d/y && " +
	"git add . && git commit -qm one && echo a2 >> a && rm b && git commit -qam two && echo a3 >> a && echo new > n && git add . && git commit -qm three && " +
	"echo wt >> a && echo staged > d/x && git add d/x"

func TestGitResetMatchesHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h, worktreeHistory,
		"git reset && git status --short",
		"git add -A && git reset -q HEAD~1 && git status --short && git log --oneline",
		"git reset --soft HEAD~1 && git status --short && cat .git/ORIG_HEAD",
		"git reset --hard HEAD && git status --short && ls && cat a",
		"git reset --hard HEAD~1 && git status --short && ls && cat a",
		"git reset -q ORIG_HEAD && git status --short",
		"git add -A && git reset -- d && git status --short",
		"git reset d/x n && git status --short",
		"git add -A && git reset HEAD~1 -- a n && git status --short",
		"git reset HEAD~9 -- a",
		"git reset --hard -- a",
		"git reset --soft HEAD -- a",
		"git reset nope",
		"git reset -- nope; git status --short",
		"git reset --bogus",
		"git reset -x",
		"echo new2 > n2 && git add n2 && mkdir -p e/f && echo z > e/f/z && git add e && git reset --hard && git status --short && ls",
		"echo q > d/x && chmod +x a && git reset --hard HEAD~1 && git status --short && ls -l a | cut -c1-10",
	)
}

func TestGitRestoreMatchesHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h, worktreeHistory,
		"git restore", "git restore nope", "git restore --bogus",
		"git restore a && git status --short && cat a",
		"git restore --staged d && git status --short",
		"git add -A && git restore --staged . && git status --short",
		"git restore --source=HEAD~2 a b && git status --short && cat a b",
		"git restore -s HEAD~1 --staged --worktree d n && git status --short; ls",
		"git restore --source=nope a",
		"git restore --worktree --staged -- . && git status --short",
	)
}

func TestGitRmMvMatchHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h, worktreeHistory,
		"git rm nope", "git rm d", "git rm a", "git rm d/x", "git rm --cached d/x",
		"git rm -f a && git status --short",
		"git rm -r d && git status --short && ls",
		"git reset -q --hard && git rm -q n && git status --short",
		"git rm --cached -r . && git status --short",
		"git reset -q && git add -A && git rm '*'",
		"git rm", "git rm -r -n 'd/*'", "git rm --bogus",
		"echo zz > b && git add b && echo yy > b && git rm b",
		"git reset -q --hard && git rm b n && git commit -qm 'rm b n' && git show --stat",
		"git mv nope x", "git mv a d", "echo u > u && git mv u x",
		"git mv -f a d/x && git diff --cached --name-status --no-renames && ls",
		"git mv d e && git diff --cached --name-status --no-renames && ls e",
		"mkdir f && git mv e/x e/y f && git diff --cached --name-status --no-renames",
		"git mv e", "git mv -k nope1 nope2 f/y g && git diff --cached --name-only --no-renames", "git mv --bogus",
		"git commit -qm moved && git log --stat --no-renames -1 --format=%s",
	)
}

func TestGitSwitchMatchesHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h, worktreeHistory+" && git reset -q --hard",
		"git switch nope", "git switch main",
		"git switch -c topic && git branch",
		"echo t >> a && git commit -qam t && git switch main && cat a",
		"git switch - && git branch --show-current",
		"git switch -",
		"git switch --detach HEAD~1 && git status | head -1",
		"git switch topic",
		"git switch HEAD~1", "git switch v1",
		"git switch -c main",
		"git switch -C main2 HEAD~1 && git log --oneline -1",
		"git switch -C main2 && git log --oneline -1",
		"git switch -C main2 main && git log --oneline -1",
		"echo local >> b && git switch --detach topic",
		"git switch --detach main~1",
		"echo l2 >> a && git switch main",
		"git switch -q topic", "git switch --bogus", "git switch -c 'bad..name'", "git switch -c x y z",
	)
}

func TestGitTagDescribeMatchHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h,
		"git init -q -b main repo && cd repo && echo a > a && git add a && git commit -qm one && git describe",
		"git describe --always && git tag v0 && git describe",
		"git tag v1 && git tag -a v2 -m 'annotated two' -m para && echo b >> a && git commit -qam two && echo c >> a && git commit -qam three",
		"git tag", "git tag -n", "git tag -n3", "git tag -l 'v*'", "git tag --list v1 v2 x", "git tag v1", "git tag -d v9",
		"git rev-parse v2 v2^{} && git show v2",
		"git describe", "git describe --tags", "git describe --long", "git describe --abbrev=4",
		"echo x >> a && git describe --dirty", "git describe --dirty=-mod --tags", "git describe --always HEAD~1",
		"git describe HEAD~2", "git describe --tags HEAD~2 HEAD~1", "git describe --abbrev=0", "git describe nope", "git describe --dirty HEAD",
		"git tag -m x v5 && git rev-parse v5 && git tag -n",
		"git tag -a v6 -m 'six' HEAD~1 && git describe && git rev-parse v6 && git show -s v6",
		"printf 'from a file\\n\\nbody\\n' > ../msg && git tag -F ../msg v8 && git rev-parse v8 && git tag -n5 -l v8",
		"git tag light HEAD~1 && git tag -l && git describe --tags",
		"git tag -d v1 v9 light", "git describe --tags", "git tag 'a..b'",
		"git tag -f v6 -m 'six again' && git describe && git rev-parse v6",
		"git tag x nope", "git tag -a v7", "GIT_EDITOR=true git tag -a v7", "git tag --bogus",
	)
}

// blameGrepHistory has three authors' lines and local changes.
const blameGrepHistory = "git init -q -b main repo && cd repo && printf 'one\\ntwo\\nthree\\n' > f && mkdir sub && " +
	"printf 'alpha(1)\\nbeta two\\nTwo words\\ntwofold\\n' > sub/g.txt && git add . && git commit -qm f1 && " +
	"printf 'one\\nTWO\\nthree\\nfour\\n' > f && GIT_AUTHOR_NAME=Bob GIT_AUTHOR_DATE=2024-02-03T04:05:06Z git commit -qam f2 && " +
	"printf 'zero\\none\\nTWO\\nthree and a half\\nfour\\n' > f && GIT_AUTHOR_NAME='Zoë Long-Name' git commit -qam f3 && echo 'two local' >> f && echo 'two untracked' > u"

func TestGitBlameMatchesHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h, blameGrepHistory,
		// Uncommitted lines carry the time of the run: compare the rest.
		"git blame f | grep -v ^00000000", "git blame -s f",
		"git blame HEAD f", "git blame HEAD~1 -- f", "git blame -L 2,3 HEAD f", "git blame -l HEAD f", "git blame -e HEAD -- f",
		"git blame sub/g.txt", "cd sub && git blame g.txt",
		"git blame nope", "git blame f sub/g.txt", "git blame --bogus f",
		"git blame -p HEAD f", "git blame --porcelain HEAD -- sub/g.txt", "git blame --line-porcelain HEAD f",
		"git blame -p -L 2,4 HEAD f", "git blame -p HEAD~1 f",
		// The worktree's lines carry the time of the run.
		"git blame -p f | grep -v -e '-time ' -e '-tz '", "git blame --line-porcelain -L 5,6 f | grep -v -e '-time ' -e '-tz '",
	)
}

func TestGitGrepMatchesHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h, blameGrepHistory,
		"git grep two", "git grep -n two", "git grep -i -n two", "git grep -l two", "git grep -c two", "git grep -w two",
		"git grep -v -c two", "git grep 'alpha(1)'", "git grep -E 'alpha\\(1\\)|TWO'", "git grep -F '(1)'", "git grep 'two\\|four'",
		"git grep -e one -e three", "git grep two HEAD~2", "git grep -n TWO HEAD -- f", "git grep two -- sub", "cd sub && git grep -n two",
		"git grep nomatch", "git grep", "git grep -h two", "git grep two nope", "git grep '^t'", "git grep 'o$'",
		"git grep '[[:upper:]]'", "git grep 'tw*o'", "git grep '*'", "git grep -in 'T.o'", "git grep --bogus",
	)
}

// Exact renames (git mv) are shown as git shows them by default; a
// rename with changes is a deletion and an addition here (see the docs).
func TestGitRenamesMatchHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h, worktreeHistory+" && git reset -q --hard",
		"git mv d e && git mv a e/ && mkdir -p src/deep && git mv n src/deep/n2 && git commit -m moved",
		"git log --stat -1", "git show", "git log --name-status -1 --format=%s", "git log --numstat -1 --format=%s",
		"git diff HEAD~1 --stat", "git diff --cached HEAD~1 --name-only", "git show --no-renames --stat",
		"git log -p -1 --no-renames | tail -3",
		"mkdir q && git mv src q/ && git commit -qm m2 && git show --stat --format=%s && git diff HEAD~2 --name-status",
		"printf '\\000bin' > bin && git add bin && git commit -m binary && git show --stat && git log -p -1",
		"printf '\\000bin2' > bin && git commit -qam bin2 && git show --stat --format=%s && git diff HEAD~1 --numstat",
	)
}

// branchyHistory has two merged branches, one merged after main moved
// on, and an unmerged one, with distinct commit dates.
const branchyHistory = `git init -q -b main repo && cd repo &&
c() { echo "$1" >> "f$2"; git add . && GIT_COMMITTER_DATE="2024-01-0${3}T03:04:05+01:00" git commit -qm "$1"; } &&
c base 1 1 && git checkout -q -b side && c s1 2 2 && c s2 2 3 && git checkout -q main && c m1 1 2 && c m2 1 3 &&
GIT_COMMITTER_DATE=2024-01-04T03:04:05+01:00 git merge -q --no-edit side &&
git checkout -q -b topic HEAD~1 && c t1 3 5 && git checkout -q main && c m3 1 6 && git checkout -q -b open && c o1 4 7 &&
git checkout -q main && GIT_COMMITTER_DATE=2024-01-08T03:04:05+01:00 git merge -q --no-edit topic`

func TestGitBranchyHistoryMatchesHost(t *testing.T) {
	compareOnHostRepo(t, branchyHistory,
		"git log --oneline", "git log --oneline --all --decorate", "git log --oneline --topo-order",
		"git log --format='%h %p %s' main ^side", "git log --oneline side...open", "git describe --always main open",
		"git log --oneline -- f2", "git log --oneline --stat -3", "git show --stat HEAD", "git diff --stat main~2 main",
		"git rev-parse main^2 main~1^2~1 main^{/m2}",
		"git log --graph --oneline --first-parent", "git log --graph --first-parent --format=%s%n%b",
		"git log --graph --oneline side", "git log --graph --oneline main~1", "git log --graph main~1",
		"git switch -q side && git log --graph --oneline -3 && git switch - && git log --oneline -1",
	)
}

// Paths outside the repository fail as in git; the message ends with the
// repository's absolute path, which differs between host and VM, so the
// scripts print it up to there.
func TestGitOutsidePathsMatchHost(t *testing.T) {
	var cmds []string
	for _, c := range []string{"log -- ../x", "diff -- /etc", "add ../x", "rm ../x", "restore ../x", "show HEAD:../x",
		"grep a -- ../", "blame ../x", "reset -- ../x", "mv a ../b", "log ../x", "diff HEAD -- ../x", "log --stat -- ../x"} {
		cmds = append(cmds, `o=$(git `+c+` 2>&1); echo "rc=$? ${o%% at ?/*}"`)
	}
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h, append([]string{"git init -q -b main repo && cd repo && echo a > a && git add a && git commit -qm one"}, cmds...)...)
}

// Paths outside ASCII, with quotes or control characters are C-quoted as
// git's core.quotePath (on by default) does, in every listing.
func TestGitQuotedPathsMatchHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h,
		"git init -q -b main repo && cd repo && echo a > a && git add a && git commit -qm one",
		"mkdir -p 'dïr/sübdir/a very long directory name that goes on and on/and on' && echo x > 'dïr/sübdir/a very long directory name that goes on and on/and on/fïle.txt' && "+
			"echo y > ü && printf '\\000b' > 'bïn' && echo q > 'q\"uote' && echo u > 'ün' && git add dïr ü bïn q* && git status && git status --short && git status --porcelain",
		"git commit -m u && git show --stat --format=%s && git log --stat -1 --format=%s && git show --name-status && git show --numstat",
		"git grep -n . && git grep -l x HEAD",
		"echo z >> ü && git status --short && git diff",
		"git mv ü ä && git commit -m mv && git show --stat && git show",
		"git rm -q 'ä' && git commit -m rm",
		"git describe -", "git describe --always -",
	)
}

// The common options of each command beyond the basics.
func TestGitCommonFlagsMatchHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h, blameGrepHistory,
		"git commit --allow-empty -m two --author='X Y <x@y>' --date='2020-01-01T00:00:00Z' -s && git log -1 --format='%an|%ae|%ad|%cn|%B'",
		"git commit --amend --reset-author -m 'three' && git log -1 --format='%an|%ae|%ad|%cn|%B'",
		"git commit --author=bogus -qm x --allow-empty",
		"git commit --author=Bob -m x --allow-empty && git log -1 --format='%an|%ae'",
		"git commit --allow-empty -s -m 'msg' -m 'Reviewed-by: Z <z@z>' && git log -1 --format=%B",
		"git commit --amend -s --no-edit && git log -1 --format=%B",
		"git commit --allow-empty --allow-empty-message -m '' && git log -1 --format='[%B]'",
		"git commit --amend --author='Q <q@q>' --no-edit",
		"git commit -n -v -m nothing", "git commit",
		"git commit -q -am 'b' --date='@1700000000 +0200' && git log -1 --format=%ad && git show -U1 && git log -p --unified=0 -1",
		"cd .. && git init -q -b main e && cd e && git commit -m x; git commit --allow-empty -m root && git commit --amend -m root2; echo u > u; git commit -m u",
		"git grep -q two; echo $?", "git grep -q nomatch; echo $?", "echo 'two more' >> f && git grep --cached -n two",
		"git grep -o -n 'tw.'", "git grep -o -i -e two -e wor", "git grep -L alpha", "git grep --cached two HEAD",
		"git rm --ignore-unmatch nope; echo $?", "git rm -q --ignore-unmatch nope sub/g.txt && git status --short",
		"git tag v1.10 && git tag v1.9 HEAD~1 && git tag -a v1.2 -m 'one two' HEAD~2 && git tag v10 && git tag v2.0.1",
		"git tag --sort=version:refname", "git tag --sort=-v:refname", "git tag --sort=-refname", "git tag --sort=creatordate",
		"git tag --contains HEAD~1", "git tag --points-at HEAD", "git tag --points-at HEAD~2 -n", "git tag --contains nope",
		"git tag -l 'v1*' --sort=-v:refname", "git tag --sort=bogus",
		"git diff -R HEAD~1 HEAD --stat", "git diff --diff-filter=AD --name-status HEAD~1", "git diff --diff-filter=d --name-status HEAD~1",
		"git log --diff-filter=A --name-only --format=%s", "git show -q", "git show --quiet --format=%s", "git diff -R --cached",
		"git tag -a -m r rel-2 HEAD && git describe --tags --match 'v*'", "git describe --exclude 'rel*' --tags",
		"git describe --match 'x*'", "git describe --match=rel-*",
		"echo u > u && git switch --orphan new && git status --short && ls && git branch && git log", "git switch --orphan main",
	)
}

// untrackedWorktree has ignored files and directories, an untracked
// directory, an empty one, local changes and a non-ASCII name.
const untrackedWorktree = "git init -q -b main repo && cd repo && echo a > a && mkdir d && echo x > d/x && echo ig > ig.log && echo '*.log' > .gitignore && " +
	"git add a d .gitignore && git commit -qm one && git tag -a -m t v1 && echo u > u && mkdir -p ud/e && echo 1 > ud/e/f && echo m >> a && rm d/x && " +
	"mkdir igd && echo z > igd/z && echo 'igd/' >> .gitignore && echo l > d/l.log && echo n > d/new && mkdir empty && echo ü > ü"

func TestGitFilesMatchHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	var cmds []string
	for _, c := range []string{"cat-file -t HEAD", "cat-file -s HEAD:a", "cat-file -p HEAD", "cat-file -p HEAD^{tree}", "cat-file -p v1",
		"cat-file blob HEAD:a", "cat-file commit HEAD", "cat-file -e HEAD", "cat-file -e nope", "cat-file -t nope", "cat-file -p nope", "cat-file",
		"cat-file -e 0123456789012345678901234567890123456789; echo $?", "cat-file tree HEAD | od -c | head -3", "cat-file -t v1", "cat-file commit v1", "cat-file -x HEAD",
		"ls-files", "ls-files -s", "ls-files -m", "ls-files -d", "ls-files -o", "ls-files -o --exclude-standard",
		"ls-files --others --exclude-standard --directory", "ls-files d", "ls-files -z | od -c", "ls-files -o d", "ls-files --bogus",
		"clean", "clean -n", "clean -nd", "clean -ndx", "clean -nX", "clean -nXd", "clean -n u", "clean -nd ud",
		"clean -fq && git status --short", "clean -fdn", "clean -x -f -d && git status --short && ls -a"} {
		cmds = append(cmds, "git "+c)
	}
	cmds = append(cmds, "cd d && git clean -n && git ls-files && git ls-files -o")
	compareWithHost(t, h, append([]string{untrackedWorktree}, cmds...)...)
}

// randomHistory is a shell script that makes a history of branches,
// merges (octopus ones too) and commits, chosen by a seeded generator,
// with a distinct date per commit.
func randomHistory(seed int64, steps int) string {
	rng := rand.New(rand.NewSource(seed))
	var b strings.Builder
	n := 0
	commit := func() {
		n++
		fmt.Fprintf(&b, " && echo %d >> f%d && git add -A && GIT_COMMITTER_DATE='@%d +0000' git commit -qm c%d", n, n%5, 1700000000+n*60, n)
	}
	b.WriteString("git init -q -b main repo && cd repo")
	commit()
	branches := []string{"main"}
	for step := 1; step <= steps; step++ {
		r, on := rng.Intn(10), branches[rng.Intn(len(branches))]
		switch {
		case r < 3:
			fmt.Fprintf(&b, " && git checkout -q %s", on)
			commit()
		case r < 5:
			nb := fmt.Sprintf("b%d", step)
			fmt.Fprintf(&b, " && git checkout -q -b %s %s", nb, on)
			branches = append(branches, nb)
			commit()
		default:
			o1, o2 := branches[rng.Intn(len(branches))], branches[rng.Intn(len(branches))]
			n++
			fmt.Fprintf(&b, " && git checkout -q %s && { GIT_COMMITTER_DATE='@%d +0000' git merge -q --no-edit --no-ff %s %s >/dev/null 2>&1 || git reset -q --hard; }",
				on, 1700000000+n*60, o1, o2)
		}
	}
	return b.String()
}

// git's graph layout on generated histories: many merges, crossing
// lines, octopus merges, several tips.
func TestGitGraphRandomHistoriesMatchHost(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			compareOnHostRepo(t, randomHistory(seed, 45),
				"git log --merges --oneline --all | wc -l",
				"git log --graph --oneline --all", "git log --graph --all --format=%s%n%b", "git log --graph --oneline",
				"git log --oneline --all --topo-order", "git log --graph --stat --all -8",
			)
		})
	}
}

// lines is the text of numbered lines from..to, as printf arguments.
func lines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\\n", i)
	}
	return b.String()
}

// Renames with changes are paired by git's similarity estimate, and
// shown with git's similarity index, in every format.
func TestGitInexactRenamesMatchHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h,
		"git init -q -b main repo && cd repo && touch e && printf 'line1\\nline2\\nline3\\nline4\\nline5\\nline6\\nline7\\nline8\\n' > t && mkdir d && "+
			"printf '"+lines(1, 40)+"' > d/n.txt && printf '"+lines(100, 130)+"' > d/m.txt && printf 'a\\r\\nb\\r\\nc\\r\\n' > crlf && printf '"+lines(1, 10)+"' > small && git add . && git commit -qm a",
		"git mv e e2 && git mv t t2 && echo more >> t2 && git add t2 && git commit -m b && git show --stat --format=%s && git show --name-status --format= && git show --format= && git log --numstat -1 --format=",
		"mkdir x && git mv d/n.txt x/n.txt && git mv d/m.txt x/other.txt && printf '"+lines(1, 30)+"' > x/n.txt && printf '"+lines(100, 125)+"' >> x/other.txt && git add -A && git commit -m c && git show --stat && git show --name-status",
		"git mv crlf crlf2 && printf 'a\\r\\nb\\r\\nc\\r\\nd\\n' > crlf2 && git mv small small2 && printf '"+lines(1, 4)+"' > small2 && git add -A && git commit -m d && git show --stat --format= && git diff HEAD~1 --name-status",
		"cp t2 t3 && git rm -q t2 && echo x >> t3 && cp t3 t4 && git add -A && git commit -qm e && git show --name-status --format= && git diff HEAD~3 --stat && git diff --cached HEAD~2 -M",
	)
	// Generated moves and edits, made by host git.
	for seed := int64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewSource(seed))
		var b strings.Builder
		b.WriteString("git init -q -b main repo && cd repo")
		for i := 1; i <= 8; i++ {
			s := rng.Intn(50)
			fmt.Fprintf(&b, " && printf '%s' > f%d.txt", lines(s, s+3+rng.Intn(40)), i)
		}
		b.WriteString(" && git add . && git commit -qm base")
		for i := 1; i <= 8; i++ {
			k := rng.Intn(20)
			switch rng.Intn(4) {
			case 0:
				fmt.Fprintf(&b, " && git mv f%d.txt g%d.txt && echo x%d >> g%d.txt", i, i, k, i)
			case 1:
				fmt.Fprintf(&b, " && { git mv f%d.txt h%d.txt 2>/dev/null || true; }", i, k%3)
			case 2:
				fmt.Fprintf(&b, " && printf 'one\\n' >> f%d.txt", i)
			default:
				fmt.Fprintf(&b, " && git rm -q f%d.txt && printf '%s' > n%d.txt", i, lines(k, k+20), i)
			}
		}
		b.WriteString(" && git add -A && git commit -qm change")
		compareOnHostRepo(t, b.String(), "git show --stat --format=", "git show --name-status --format=", "git show --format=", "git diff HEAD~1 --numstat")
	}
}

// diff --no-index compares files and directories of the filesystem, in a
// directory that is not a repository (where plain git diff of two paths
// does the same).
func TestGitDiffNoIndexMatchesHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	cmds := []string{"mkdir repo && cd repo && printf 'a\\nb\\n' > x && printf 'a\\nc\\n' > y && mkdir d1 d2 && echo 1 > d1/f && echo 2 > d2/f && echo new > d2/g && echo old > d1/h && cp x z"}
	for _, c := range []string{"diff --no-index x y", "diff --no-index x z", "diff --no-index d1 d2", "diff --no-index --stat x y",
		"diff --no-index x nope", "diff --no-index x", "diff --no-index --name-status d1 d2", "diff --no-index --name-only d1 d2",
		"diff --no-index --stat d1 d2", "diff --no-index --numstat x y", "diff --no-index /dev/null x", "diff --no-index --quiet x y",
		"diff --no-index x d2", "diff --no-index d1 x", "diff x y", "diff --no-index -- x y", "diff --no-index --exit-code x z",
		"diff --no-index -U0 x y"} {
		cmds = append(cmds, "git "+c)
	}
	compareWithHost(t, h, cmds...)
}

func TestGitRevParseMatchesHost(t *testing.T) {
	compareOnHostRepo(t, mergeHistory+" && mkdir -p sub/deep",
		`t=$(git rev-parse --show-toplevel) && echo "[${t#$PWD}]"`,
		"cd sub/deep && git rev-parse --show-prefix --show-cdup --is-inside-git-dir --is-bare-repository --is-inside-work-tree --symbolic-full-name HEAD --symbolic-full-name main --abbrev-ref main --short=10 HEAD",
		"git rev-parse --verify -q nope; echo $?", "git rev-parse --verify HEAD^{commit}",
		"cd sub/deep && git rev-parse --git-common-dir --git-path objects",
		`git rev-parse --git-dir && cd sub && d=$(git rev-parse --git-dir) && echo "[${d#$(cd .. && pwd)}]"`,
		"git rev-parse --abbrev-ref HEAD@{u} --symbolic-full-name @{u}", "git rev-parse --symbolic HEAD",
		`git rev-parse --sq-quote a "b'c"`, "git rev-parse HEAD --", "git rev-parse --local-env-vars", "git rev-parse --short",
		"git rev-parse --short HEAD v1.1", "git rev-parse side..main ^v1 --foo",
		"git rev-parse --verify", "git rev-parse --abbrev-ref v1.1 side", "git rev-parse --show-prefix --show-cdup",
		"git rev-parse --verify HEAD HEAD", "git rev-parse --verify -q HEAD HEAD; echo $?", "git rev-parse HEAD nope",
		"git rev-parse --short=4 HEAD", "git rev-parse --verify --short HEAD", "git rev-parse HEAD --verify", "git rev-parse --verify nope HEAD",
		"git rev-parse --abbrev-ref HEAD && git switch -q --detach HEAD~1 && git rev-parse --abbrev-ref HEAD --symbolic-full-name HEAD",
	)
}

func TestGitShortlogMatchesHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h, blameGrepHistory,
		"git shortlog HEAD", "git shortlog -sn HEAD", "git shortlog -sne HEAD", "git shortlog -s -c HEAD", "git shortlog HEAD~2..HEAD",
		"git shortlog --format='%h %s' -1 HEAD", "git shortlog -n HEAD", "git shortlog -e HEAD",
		// Without a revision shortlog reads "git log" output from stdin.
		"git shortlog < /dev/null", "git log | git shortlog", "git log | git shortlog -s -n -e",
		"git commit -q --allow-empty -m '[PATCH 1/2] patched' && git shortlog HEAD~1.. && git shortlog -- f",
		"git shortlog --bogus HEAD", "git shortlog HEAD -- f",
	)
}

// Relative dates are computed against the time of the run, as git does;
// the commits are dated relative to it so that each unit is covered.
func TestGitRelativeDatesAndFormatEntriesMatchHost(t *testing.T) {
	var b strings.Builder
	b.WriteString("git init -q -b main repo && cd repo")
	// Both copies get the same dates (so the same hashes): fixed here.
	now := time.Now().Unix()
	for i, ago := range []int64{3 * 365 * 86400, 400 * 86400, 100 * 86400, 40 * 86400, 10 * 86400, 30 * 3600, 3 * 3600, 50 * 60, 100} {
		fmt.Fprintf(&b, " && GIT_AUTHOR_DATE='@%d +0000' GIT_COMMITTER_DATE='@%d +0200' git commit -q --allow-empty -m c%d", now-ago, now-ago, i)
	}
	compareOnHostRepo(t, b.String()+" && git checkout -q -b side HEAD~2 && git commit -q --allow-empty -m s && git checkout -q main && git merge -q --no-edit --no-ff side",
		"git log --pretty=format:'%h - %an, %ar : %s | %cr'", "git log --date=relative -3", "git log --format='%ar %cr'",
		"git log --pretty=format:%s -2 --stat", "git show --pretty=format:%s -s HEAD HEAD~1",
		"git log --graph --pretty=format:%s", "git log --graph --pretty=format:%s%n%b", "git log --pretty=format:",
	)
}
