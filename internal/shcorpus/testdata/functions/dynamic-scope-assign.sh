f() { local v=1; g; echo "f: v=$v"; }
g() { v=2; }
v=0
f
echo "top: v=$v"
