//go:build !wasip1

package main

import (
	"github.com/secexec/secexec/internal/vm"
	"testing"

	"github.com/secexec/secexec/internal/vmhost"
	"github.com/secexec/secexec/internal/vmtest"
)

// These tests run the history commands (merge, stash, cherry-pick,
// rebase, revert, apply) in the VM and with the host's git on the same
// scripts, with fixed identities and dates: output, exit status and
// every commit hash must be the same.

// seq writes the lines 1..9 to f, the usual base file of these tests.
const seq = "printf '1\\n2\\n3\\n4\\n5\\n6\\n7\\n8\\n9\\n' > f"

func TestGitMergeMatchesHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h,
		"git init -q -b main repo",
		seq+" && echo keep > k && echo gone > d && git add . && git commit -q -m base",
		// A fast-forward with a diffstat, then "Already up to date.".
		"git checkout -b feat && sed -i 's/^2$/2feat/' f && echo new > g && rm d && git add . && git commit -q -m feat && git checkout main",
		"git merge feat && git log --format='%H %P %s' && git status",
		"git merge feat; echo $?; git merge main",
		// A merge commit of edits in different places of one file, with a
		// file added on each side and one deleted.
		"git checkout -b side HEAD~1 && sed -i 's/^8$/8side/' f && echo s > s && rm k && git add . && git commit -q -m side",
		"git checkout main && git merge side && git log --format='%H %P %s' && cat f && git status --short && ls",
		// --no-ff and -m.
		"git checkout -b nf && echo x >> k2 && git add k2 && git commit -q -m nf && git checkout main && git merge --no-ff -m 'merge nf' nf && git log -3 --format='%H %P %s'",
		"git checkout -b ff2 && echo y >> k2 && git commit -q -am ff2 && git checkout nf && git merge --ff-only ff2 && git merge --ff-only main; echo $?",
		"git merge nosuch; echo $?; git merge --abort; echo $?",
		// Local changes and untracked files in the way stop a merge.
		"git checkout -b ff3 && echo u3 > u3 && git add u3 && git commit -q -m u3 && git checkout main && echo x > u3 && git merge ff3; echo $?; rm u3",
		"git checkout -b ff5 && echo more >> f && git commit -q -am ff5 && git checkout main && echo dirty >> f && git merge ff5; echo $?; git checkout -- f",
		"git checkout -b ff6 main~1 && echo u6 > u6 && git add u6 && git commit -q -m u6 && git checkout main && echo x > u6 && git merge ff6; echo $?; rm u6; git status --short",
		"git checkout -b nc main~1 && echo nc > nc && git add nc && git commit -q -m nc && git merge --no-commit main; echo $?; git status; git commit --no-edit && git log -1 --format='%H %P %s'",
		"git checkout main && git merge -q nc && git log -1 --format=%s && git merge nc && git merge --no-ff nc",
		// --squash: the index and worktree only, and SQUASH_MSG for commit.
		"git checkout -b sq feat~1 && git merge --squash feat && git status --short && git commit -q -m squashed && git log -2 --format='%H %P %s'",
		"git checkout -b sq2 side && git merge --squash nf; echo $?; git status --short; git commit -q -m squashed2 && git log -1 --format='%H %P %s'",
		"git checkout main",
		// Unrelated histories merge only when asked to.
		"git init -q -b main ../other && cd ../other && echo o > o && git add o && git commit -q -m other && cd ../repo && cp -r ../other/.git/objects/. .git/objects/ && cp ../other/.git/refs/heads/main .git/refs/heads/other",
		"git merge other; echo $?; git merge --allow-unrelated-histories other && git log -1 --format='%H %P %s' && ls",
		// Merging into a branch other than main names it in the message.
		"git checkout -b other HEAD~1 && echo o > o && git add o && git commit -q -m other && git merge --no-edit main && git log -1 --format=%B",
	)
}

func TestGitMergeConflictsMatchHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h,
		"git init -q -b main repo",
		seq+" && echo d > d && echo m > m && git add . && git commit -q -m base",
		"git checkout -b feat && sed -i 's/^2$/2feat/; s/^5$/5feat/; s/^9$/9feat/' f && echo aa > a && rm d && echo x >> m && git add . && git commit -q -m feat",
		"git checkout main && sed -i 's/^2$/2main/; s/^6$/6main/; s/^9$/9feat/' f && echo bb > a && echo dd >> d && rm m && echo n > n && git add . && git commit -q -m main",
		"git merge feat; echo $?",
		"cat f a; git status; git status --short; git diff; git diff -- f",
		// Conflicted paths in the other diff formats ("U", git's
		// "Unmerged" stat line), --diff-filter=U as scripts list them,
		// and ls-files with the stages.
		"git diff --stat; git diff --numstat; git diff --shortstat; git diff --name-status; git diff --diff-filter=U --name-only; git diff --diff-filter=U; git diff --cached --name-status; git diff --cached; git diff --cached --stat; git ls-files -s; git ls-files -m; git ls-files",
		"git commit -m x; echo $?; git merge feat; echo $?",
		"git merge --abort && git status && cat f && ls",
		"git merge feat >/dev/null; echo fixed > f && echo a > a && rm m && git add -A && git status",
		"git commit --no-edit && git log --format='%H %P' -1 && git log -1 --format=%B && git status",
		// A conflict between adjacent lines, and one where both sides made
		// the same change next to different ones (trimmed by git).
		"git checkout -b t1 HEAD~1 && printf '1\\n2\\nX\\nY\\n5\\n6\\n7\\n8\\n9\\n' > f && git commit -q -am t1",
		"git checkout -b t2 HEAD~1 && printf '1\\n2\\nX\\nZ\\n5\\n6\\n7\\n8\\n9\\nextra\\n' > f && git commit -q -am t2",
		"git log --format=%s t1...t2; git log --format=%s t2...t1",
		"git merge t1; echo $?; cat f; git diff; sed -i '/^=======$/d' f && git diff; git merge --abort",
		"echo dirty >> f && git merge t1; echo $?; git checkout -- f",
		// commit concludes the merge as git does: no --amend, no
		// unmerged paths, and without --no-edit the editor starts on the
		// prepared message (none here: git's "Terminal is dumb").
		"git merge t1 >/dev/null; git commit --amend; echo $?; git commit; echo $?; echo r > f && git add f && git commit; echo $?; GIT_EDITOR=true git commit && git log -1 --format='%P%n%B' && git status --short && git reset -q --hard HEAD~1",
		"git merge t1 >/dev/null; git commit -a -m 'with markers'; echo $?; git log -1 --format='%H %P %s' && git status --short && git reset -q --hard HEAD~1",
		"git merge -q t1; echo $?; git merge --abort",
		// Binary files conflict whole.
		"git checkout -b b1 && printf 'a\\0b' > bin && git add bin && git commit -q -m b1 && git checkout -b b2 HEAD~1 && printf 'a\\0c' > bin && git add bin && git commit -q -m b2",
		"git merge b1; echo $?; git status --short; git merge --abort; git checkout main",
		"git merge --continue; echo $?",
		// ort wants the index to match HEAD, whatever the merge touches.
		"echo staged >> d && git add d && git merge t1; echo $?; git status --short",
	)
}

func TestGitStashMatchesHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h,
		"git init -q -b main repo",
		seq+" && echo a > a && echo d > d && git add . && git commit -q -m base",
		"git stash; echo $?; git stash list; git stash pop; echo $?",
		// The index commit and the WIP commit have git's hashes.
		"sed -i 's/^2$/two/' f && echo n > n && git add n f && echo more >> f && rm d && echo u > u && git stash && git status --short",
		"git stash list && git log --format='%H %P %s' stash && git log --format='%H %T' -1 'stash^2' && git stash show && git stash show -p",
		"echo y >> a && git stash push -m 'my message' && git stash list && git stash show stash@{1}",
		"git stash pop; echo $?; git stash list; git status --short",
		"git checkout -- a && git stash apply stash@{0}; echo $?; git stash list; git status --short; cat f",
		"git stash drop; echo $?; git stash list; git stash drop; echo $?; git stash pop; echo $?",
		// A pop that conflicts keeps the entry.
		"git add -A && git commit -q -m wip && sed -i 's/^5$/five/' f && git stash -q && sed -i 's/^5$/FIVE/' f && git commit -q -am conflicting",
		"git stash pop; echo $?; git stash list; git status; cat f",
		"git add f && git commit -q -m resolved; git stash list",
		"echo z > z && echo q >> a && git stash -u && git status --short && git log --format='%H %P %s' -1 stash && ls",
		"git stash pop && ls && git status --short && git stash clear && git stash list",
		"sed -i 's/^1$/one/' f && git add f && sed -i 's/^9$/nine/' f && git stash --keep-index && git status --short && cat f && git stash show -p",
		"git checkout -- f && git stash pop -q; echo $?; git status --short; git stash list",
		// Pathspecs stash only what they name.
		"git stash clear; mkdir -p dd && echo c > dd/c && git add dd && git commit -q -m dd && echo a2 >> a && echo c2 >> dd/c && echo b2 >> f && echo nn > nn && git add nn f",
		"git stash push -m part -- a dd nosuch; echo $?; git stash push -m part -- a dd && git status --short && git stash show && git log --format='%H %s' -1 stash",
		"git stash push nn && git status --short && git stash list && git stash pop -q && git stash pop -q && git status --short && git add -A && git commit -q -m parts",
		// --index puts staged changes back in the index.
		"echo s1 >> a && git add a && echo w1 >> f && git stash -q && git stash apply --index && git status --short && git stash pop; git status --short",
	)
}

func TestGitCherryPickRevertMatchHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h,
		"git init -q -b main repo",
		seq+" && git add . && git commit -q -m base",
		"git checkout -b feat && sed -i 's/^2$/2feat/' f && git commit -q -am 'feat one' && echo g > g && git add g && git commit -q -m 'feat two' && git checkout main",
		"sed -i 's/^8$/8main/' f && git commit -q -am 'main one'",
		// The author (and its date) is the picked commit's.
		"GIT_AUTHOR_DATE=2020-01-01T00:00:00Z GIT_AUTHOR_NAME=Other git cherry-pick feat~1 && git cherry-pick -x feat && git log --format='%H %an %ad %s' && git log -1 --format=%B",
		"git revert HEAD && git log -1 --format='%H %P%n%B' && ls",
		"git cherry-pick nosuch; echo $?; git cherry-pick --continue; echo $?",
		"git checkout -b cx main~2 && sed -i 's/^5$/5x/' f && git commit -q -am cx && git checkout main && echo dirty >> f && git cherry-pick cx; echo $?; git checkout -- f",
		// A conflicting pick, resolved and continued.
		"git checkout -b c2 main~4 && sed -i 's/^8$/8other/' f && git commit -q -am 'other eight' && git checkout main",
		"git cherry-pick c2; echo $?; git status; git status --short; cat f",
		"git cherry-pick --continue; echo $?; git commit -m x; echo $?",
		"sed -i '/^[<=>]/d; /^8main$/d' f && git add f && GIT_EDITOR=true git cherry-pick --continue && git log -1 --format='%H%n%B' && git status",
		// Aborted, and concluded with git commit instead.
		"git revert HEAD~1; echo $?; git status --short; git revert --abort && git status && git log -1 --format=%s",
		"git cherry-pick c2 2>/dev/null; echo resolved > f && git add f && git commit --no-edit && git log -1 --format='%H%n%B'",
		// Several commits, and a range: git's sequencer.
		"git checkout -b m0 main && printf '1\\n2\\n3\\n' > mf && git add mf && git commit -q -m M0 && git checkout -b m1",
		"echo a > ma && git add ma && git commit -q -m MA && sed -i 's/^2$/2m1/' mf && git commit -q -am MB && echo c > mc && git add mc && git commit -q -m MC && git checkout main",
		"git cherry-pick m1~2 m1; echo $?; git log --format='%H %s' -3",
		"git checkout -b m2 m0 && sed -i 's/^2$/2m2/' mf && git commit -q -am M2 && git cherry-pick m1~3..m1; echo $?; git status; git status --short",
		"git cherry-pick --skip; echo $?; git log --format='%H %s' -3; git status --short; git cherry-pick --skip; echo $?",
		"git checkout -b m3 m0 && sed -i 's/^2$/2m3/' mf && git commit -q -am M3 && git cherry-pick m1~3..m1 >/dev/null 2>&1; echo fixed > mf && git add mf && git status && GIT_EDITOR=true git cherry-pick --continue; echo $?; git log --format='%H %s' -4",
		"git checkout -b m4 m0 && sed -i 's/^2$/2m4/' mf && git commit -q -am M4 && git cherry-pick m1~3..m1 >/dev/null 2>&1; git cherry-pick --abort; echo $?; git log --format='%H %s' -1; git status --short; git checkout main",
		// -n: the changes only, onto the index; git commit takes the message.
		"git checkout -b n1 m0 && git cherry-pick -n m1~2 m1~1; echo $?; git status; git commit -q -m both && git log -1 --format='%H %s' && git checkout main",
		"git checkout -b c3 HEAD~2 && sed -i 's/^1$/one/' f && git commit -q -am 'c3 one' && git checkout main && sed -i 's/^1$/uno/' f && git commit -q -am uno",
		"git cherry-pick c3; echo $?; git cherry-pick c3; echo $?; git cherry-pick --abort && git status && git log -1 --format=%s",
		"git cherry-pick c3 >/dev/null 2>&1; git cherry-pick --skip; echo $?; git status --short; git log -1 --format=%s",
		// A conflicting -n pick or revert gets git's short hint, and
		// commit (-a resolving what the worktree holds) concludes it with
		// the prepared message and the picked author.
		"git cherry-pick -n c3; echo $?; git status --short; git reset -q --hard && git revert -n HEAD; echo $?; cat .git/MERGE_MSG; git reset -q --hard",
		"git cherry-pick c3 >/dev/null 2>&1; git commit --amend -m x; echo $?; git cherry-pick --abort",
		"git cherry-pick -n c3 >/dev/null 2>&1; echo r > f && GIT_EDITOR=true git commit -a; echo $?; git log -1 --format='%H %an %s'; git status --short",
		"git checkout -q c3 && git status | head -n 1 && git checkout -q main && git checkout -q -b q1 && git branch --show-current && git checkout -q main",
	)
}

func TestGitRebaseMatchesHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h,
		"git init -q -b main repo",
		seq+" && git add . && git commit -q -m base",
		"git checkout -b feat && sed -i 's/^2$/2feat/' f && git commit -q -am 'feat one' && echo g > g && git add g && git commit -q -m 'feat two' && sed -i 's/^9$/9feat/' f && git commit -q -am 'feat three'",
		"git checkout main && sed -i 's/^5$/5main/' f && echo m > m && git add . && git commit -q -m 'main one'",
		// A clean rebase: same hashes as git's, the branch moved, HEAD on it.
		"git checkout feat && git rebase main; echo $?; git log --format='%H %P %an %s' && git status && git rebase main",
		"git rebase nosuch; echo $?; echo x >> f && git rebase main; echo $?; git checkout -- f; git rebase --continue; echo $?",
		// A fast-forward, and a commit upstream already has.
		"git checkout -b behind main~1 && git rebase main && git log -1 --format=%s",
		"git checkout -b picked main~1 && sed -i 's/^5$/5main/' f && git commit -q -am 'same as main' && echo p > p && git add p && git commit -q -m 'own' && git rebase main && git log --format='%H %s' -3",
		// Conflicts: stop, status, continue, abort.
		"git checkout -b c main~1 && sed -i 's/^2$/2c/' f && git commit -q -am 'c one' && echo c > c && git add c && git commit -q -m 'c two' && sed -i 's/^3$/3c/' f && git commit -q -am 'c three'",
		"git rebase feat; echo $?; git status; git status --short; cat f",
		"git rebase --continue; echo $?; git rebase main; echo $?",
		"sed -i '/^[<=>]/d; /^2feat$/d' f && git add f && GIT_EDITOR=true git rebase --continue; echo $?; git status",
		"git rebase --abort && git status && git log --format='%H %s' -3 && cat f",
		"git rebase feat >/dev/null 2>&1; echo resolved > f && git add f && GIT_EDITOR=true git rebase --continue; echo $?; git log --format='%H %P %s' -4; git status --short; git branch",
		"git checkout -b s main~1 && sed -i 's/^2$/2s/' f && git commit -q -am 's one' && echo s > s && git add s && git commit -q -m 's two'",
		"git rebase feat; echo $?; git rebase --skip; echo $?; git log --format='%H %s' -3; git status --short",
		// --onto: the commits after c~1 only, onto main. (checkout takes
		// refs/heads/c: go-git resolves a bare "c" as a hash prefix.)
		"git stash -q; git stash drop -q; git checkout -b o2 refs/heads/c && git rebase --onto main c~1; echo $?; git log --format='%H %P %s' -3",
		// -q: no progress, no report.
		"git rebase --abort; git checkout -b q1 main~1 && echo q > q && git add q && git commit -q -m q && git rebase -q main; echo $?; git rebase -q main; echo $?; git log --format='%H %s' -2",
		// A branch with a merge: every commit the merge brought is
		// replayed, the merge itself dropped, in git's topological order.
		"git init -q -b main ../mr && cd ../mr && echo b > b && git add b && git commit -q -m b && git checkout -b mg1 && echo m1 > m1 && git add m1 && git commit -q -m m1 && git checkout -b mg2 main && echo m2 > m2 && git add m2 && git commit -q -m m2 && echo m3 > m3 && git add m3 && git commit -q -m m3",
		"cd ../mr && git checkout main && echo u > u && git add u && git commit -q -m u && git checkout mg1 && git merge -q --no-edit mg2 && git rebase main; echo $?; git log --format='%H %P %s' -5",
	)
}

// patchF changes line 2 of seq's file and adds a file n; its second
// hunk has no trailing context, so it must apply at the end of f.
const patchF = `diff --git a/f b/f
index 0719398..73aebbe 100644
--- a/f
+++ b/f
@@ -1,5 +1,5 @@
 1
-2
+two
 3
 4
 5
@@ -8,2 +8,3 @@
 8
 9
+ten
diff --git a/n b/n
new file mode 100644
index 0000000..8ba3a16
--- /dev/null
+++ b/n
@@ -0,0 +1 @@
+n
`

// patchMoved is a diff -u style patch (no git headers, -p0 names) whose
// hunk is 2 lines off where it says.
const patchMoved = `--- f.orig
+++ f
@@ -2,3 +2,3 @@
 4
-5
+five
 6
`

// patchRename renames g to g2 unchanged and n to n2 with an edit, as
// git diff -M writes them.
const patchRename = `diff --git a/g b/g2
similarity index 100%
rename from g
rename to g2
diff --git a/n b/n2
similarity index 50%
rename from n
rename to n2
index 8ba3a16..a3c6e01 100644
--- a/n
+++ b/n2
@@ -1 +1,2 @@
 n
+more
`

func TestGitApplyMatchesHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h,
		"git init -q -b main repo && printf '%s' '"+patchF+"' > p1 && printf '%s' '"+patchMoved+"' > p2 && echo garbage > p3",
		seq+" && git add f && git commit -q -m base",
		"git apply --stat ../p1 && git apply --numstat ../p1 && git apply --check ../p1 && git status --short",
		"git apply ../p1; echo $?; git status --short; cat f n",
		"git apply ../p1; echo $?; git apply --check ../p1; echo $?",
		"git apply -R ../p1; echo $?; git status --short",
		"git apply --cached ../p1; echo $?; git status --short; git apply --index ../p1; echo $?",
		"git checkout -- f && rm -f n && git apply --index ../p1; echo $?; git status --short && git diff --cached",
		"git commit -q -m applied && git apply -p0 ../p2; echo $?; git apply ../p2; echo $?; git diff",
		"git apply ../nosuch; echo $?; git apply ../p3; echo $?; git apply -R ../p2 && git diff; git status --short",
		"git checkout -- n && git status --short",
		"echo 2 > g && git add g && git commit -q -m g && sed -i 's/^2$/X/' g && git diff > ../p5 && git checkout -- g && git apply ../p5 && cat g && git apply -R ../p5 && cat g",
		"echo changed > g && git apply ../p5; echo $?",
		// Renames, with and without an edit.
		"git checkout -- g && printf '%s' '"+patchRename+"' > ../p6 && git apply --stat ../p6 && git apply --index ../p6 && ls && cat n2 && git apply -R --index ../p6 && git status --short",
	)
}

// A conflict the VM's git leaves is the one host git leaves for the
// same merge (index stages, files, MERGE_MSG), host git concludes it to
// the same commit, and host git continues a rebase the VM's git stopped.
func TestGitConflictStateSharedWithHost(t *testing.T) {
	dir := t.TempDir()
	hostRun := func(script string) output {
		t.Helper()
		o := hostSh(t, dir, script)
		if o.code != 0 {
			t.Fatalf("host: %s: exit %d: %s%s", script, o.code, o.stdout, o.stderr)
		}
		return o
	}
	hostRun("git init -q -b main repo && cd repo && " + seq + " && echo d > d && git add . && git commit -q -m base && " +
		"git checkout -q -b feat && sed -i 's/^2$/2feat/' f && rm d && git add -A && git commit -q -m feat && " +
		"git checkout -q main && sed -i 's/^2$/2main/' f && echo dd >> d && git commit -q -am main && cd .. && cp -r repo twin")
	h := vmtest.NewHost(t, vmhost.Config{Mounts: []vm.Mount{{Path: "/mnt/host", HostDir: dir}}})
	if o := vmSh(t, h, "cd /mnt/host/repo && git merge feat"); o.code != 1 {
		t.Fatalf("VM merge: exit %d: %s%s", o.code, o.stdout, o.stderr)
	}
	hostSh(t, dir, "cd twin && git merge feat")
	inspect := "git ls-files -s && git status && cat f .git/MERGE_HEAD .git/MERGE_MSG"
	if got, want := hostRun("cd repo && "+inspect), hostRun("cd twin && "+inspect); got != want {
		t.Fatalf("host git on the VM's conflict:\n%s\non its own:\n%s", got.stdout, want.stdout)
	}
	conclude := "echo r > f && git add -A && git commit -q --no-edit && git rev-parse HEAD"
	if got, want := hostRun("cd repo && "+conclude), hostRun("cd twin && "+conclude); got != want {
		t.Fatalf("host git concluding the VM's merge: %s, its own: %s", got.stdout, want.stdout)
	}
	hostRun("cd repo && git checkout -q -b topic main~2 && sed -i 's/^2$/2topic/' f && git commit -q -am t1 && echo x > x && git add x && git commit -q -m t2 && cd .. && rm -rf twin && cp -r repo twin")
	if o := vmSh(t, h, "cd /mnt/host/repo && git rebase main"); o.code != 1 {
		t.Fatalf("VM rebase: exit %d: %s%s", o.code, o.stdout, o.stderr)
	}
	hostSh(t, dir, "cd twin && git rebase main")
	status := "git status && git ls-files -s"
	if got, want := hostRun("cd repo && "+status), hostRun("cd twin && "+status); got != want {
		t.Fatalf("host git on the VM's stopped rebase:\n%s\non its own:\n%s", got.stdout, want.stdout)
	}
	cont := "echo r2 > f && git add f && GIT_EDITOR=true git rebase --continue && git log --format='%H %s' && git status --short"
	if got, want := hostRun("cd repo && "+cont), hostRun("cd twin && "+cont); got != want {
		t.Fatalf("host git continuing the VM's rebase:\n%s\non its own:\n%s", got.stdout, want.stdout)
	}
}

// Renames: git's ort strategy follows a file one side renamed, and the
// diffstats show renames as git does.
func TestGitMergeRenamesMatchHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	long := "printf 'alpha\\nbeta\\ngamma\\ndelta\\nepsilon\\nzeta\\neta\\ntheta\\niota\\nkappa\\n'"
	compareWithHost(t, h,
		"git init -q -b main repo",
		long+" > f && mkdir -p src/lib && "+long+" | tr a-z A-Z > src/lib/u.txt && echo keep > k && git add . && git commit -q -m base",
		// A pure rename merged into a modified file, then a fast-forward over a rename.
		"git checkout -b mv && git mv f g 2>/dev/null || (cp f g && rm f && git add -A) && git commit -q -m 'rename f' && git checkout main",
		"sed -i 's/^beta$/BETA/' f && git commit -q -am 'edit f' && git merge mv && ls && cat g && git log -1 --format='%H %s'",
		"git checkout -b mv2 && mkdir -p src/app && cp src/lib/u.txt src/app/u.txt && rm src/lib/u.txt && sed -i 's/^ETA$/ETA2/' src/app/u.txt && git add -A && git commit -q -m 'move u' && git checkout main && git merge mv2",
		// Both sides edit a file one of them renamed: merged at the new path, or a conflict there.
		"git checkout -b r1 && cp g h && rm g && sed -i 's/^kappa$/KAPPA/' h && git add -A && git commit -q -m 'g to h' && git checkout main",
		"sed -i 's/^gamma$/GAMMA/' g && git commit -q -am 'edit g' && git merge r1 && cat h && ls",
		"git checkout -b r2 && cp h i && rm h && sed -i 's/^delta$/D-theirs/' i && git add -A && git commit -q -m 'h to i' && git checkout main",
		"sed -i 's/^delta$/D-ours/' h && git commit -q -am 'edit h' && git merge r2; echo $?; cat i; git status; git status --short; ls",
		"echo resolved > i && git add -A && git commit -q --no-edit && git log -1 --format='%H %P %s'",
		// Renamed two ways, and renamed against a deletion.
		"git checkout -b rr1 && printf 'one\\ntwo\\nthree\\nfour\\nfive\\n' > b1 && echo x > b5 && git add -A && git commit -q -m rr-base",
		"git checkout -b rr2 && cp i z2 && rm i && cp b1 c1 && rm b1 && echo feat > b5 && git add -A && git commit -q -m rr2 && git checkout rr1",
		"cp i z1 && rm i b1 && echo main > b5 && git add -A && git commit -q -m rr1 && git merge rr2; echo $?; git status; git status --short; ls",
		"git merge --abort && git checkout main",
		// A picked or reverted rename is summarised as git does.
		"git checkout -b r3 && cp k k2 && rm k && git add -A && git commit -q -m 'k to k2' && git checkout main && git cherry-pick r3 && git revert HEAD",
	)
}

// A merge into a branch with no commits yet takes the commit as it is.
func TestGitMergeIntoUnbornMatchesHost(t *testing.T) {
	h := vmtest.NewHost(t, vmhost.Config{})
	compareWithHost(t, h,
		"git init -q -b main repo && git init -q -b main src && cd src && echo a > a && git add a && git commit -q -m A",
		"cp -r ../src/.git/objects/. .git/objects/ && cp ../src/.git/refs/heads/main .git/refs/heads/other && git merge other; echo $?; git log --format='%H %s'; ls; git status",
	)
}
