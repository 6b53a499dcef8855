# A stage that keeps writing after its reader has gone ends alone (bash's
# subshell dies of SIGPIPE); the shell goes on.
f() { while :; do echo "y"; done; }
f | head -n 1
echo "function ${PIPESTATUS[*]}"
while :; do echo "line"; done | head -n 2
echo "loop ${PIPESTATUS[*]}"
x=ok
echo "$x" | true
echo "builtin reader $?"
printf '%s\n' a b c | { read -r first; echo "first $first"; }
echo "group $?"
yes | head -n 1
echo "program ${PIPESTATUS[*]}"
set -o pipefail
while :; do echo "z"; done | head -n 1
echo "pipefail $?"
echo end
