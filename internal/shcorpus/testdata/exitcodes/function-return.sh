f() { return 3; }
f; echo $?
g() { false; }
g; echo $?
h() { return; }
false; h; echo $?
