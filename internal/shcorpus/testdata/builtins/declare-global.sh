f() { declare -g G=global-from-f; local L=local; }
f
echo "${G} ${L-unset}"
