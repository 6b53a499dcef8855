#!/bin/sh
# Pipeline stages that are one plain command (echo, pwd, true, a
# program) run on a shallow copy of the shell: they must still be
# subshells that leave the shell's state, traps and descriptors alone.
trap 'echo "exit trap once"' EXIT
x=outer
echo hello | wc -c
echo a b c | cat
pwd | wc -l
true | false
echo "status $?"
false | true
echo "status $?"
# The reader is gone before echo writes (bash: a SIGPIPE for echo alone).
echo gone | false
echo "status $?"
echo one >/dev/null | cat
echo two 2>&1 | cat
: | cat
cd / | cat
echo "x=$x"
export E=exported
printenv E | cat
f() { echo "f ran"; }
f | cat
echo first | echo second
echo -n no-newline | wc -c
echo -e 'a\tb' | od -c | head -n 1
printf '%s\n' printf-stage | cat
test -n x | cat
echo "still $x"
