echo 'return 3' > r.sh
f() { source ./r.sh; echo "after source: $?"; }
f
