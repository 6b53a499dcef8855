echo abc | grep -q b; echo $?
echo abc | grep -q z; echo $?
grep -q x nonexistent-file 2>/dev/null; echo $?
