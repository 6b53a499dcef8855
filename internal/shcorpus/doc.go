// Package shcorpus is the differential corpus of the VM's shell (issue
// #20, "a shell agents can trust"): small bash scripts under testdata/,
// grouped by topic, each run under host GNU bash 5.2 (the oracle) and
// under the VM's bash, compared byte for byte on stdout, stderr and exit
// status. It is modelled on mvdan.cc/sh's TestRunnerRunConfirm.
//
// Every script runs the same way on both sides: copied as s.sh into a
// fresh empty directory and run as `bash s.sh` there, with only PATH,
// HOME, LANG=C.UTF-8 and TZ=UTC in the environment. The run directory
// (host temporary directory or VM path) is rewritten to "$DIR" in both
// outputs, and the program name opening a line of stderr ("s.sh: line
// 3: ...", "bash: ...") to "$0": the issue compares stderr modulo the
// program name. Scripts starting with "#!/bin/sh" also run as
// `sh s.sh` in the VM against `bash --posix s.sh` on the host (the VM's
// sh is its bash in POSIX mode); known-failures.txt names those runs
// "sh:topic/name.sh".
//
// Scripts must be deterministic and hermetic: no clocks, PIDs, host
// paths or network; only builtins and common commands whose output is
// the same in GNU coreutils and the VM's userland. A script may create
// files in its directory. By convention a line printing REACHED must
// never run (errexit, nounset...): the test fails if host bash prints it.
//
// testdata/known-failures.txt lists the runs that do not match today.
// The test fails on any unlisted mismatch (a regression) and on any
// listed run that now matches (prune the list), except runs marked
// "flaky" (the shell races today: either outcome is accepted). After
// changing the shell, regenerate the list with
//
//	go test ./internal/shcorpus -run TestCorpus -update-known-failures
//
// and raise minPassRate in corpus_test.go to the new measured rate
// (the test logs it); the target is 0.98.
package shcorpus
