function a { echo a; }
function b() { echo b; }
c() ( echo "c in subshell" )
a; b; c
