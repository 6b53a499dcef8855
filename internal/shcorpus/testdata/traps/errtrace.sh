set -E
trap 'echo "ERR in ${FUNCNAME[0]:-main}"' ERR
f() { false; echo in f; }
f
set +E
g() { false; echo in g; }
g
