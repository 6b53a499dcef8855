f() { local -r ro=1; ro=2; echo "ro=$ro"; }
f
echo "status $?"
