set -u
g() { local v; echo "v=${v-unset}"; echo "$w"; }
g
echo REACHED
