f() { (exit 3); echo "in f $?"; return 4; }
f
echo "f returned $?"
g() { exit 5; }
( g )
echo "g in subshell exited $?"
