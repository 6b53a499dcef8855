set -eu
case $- in *e*) echo "e in \$-" ;; esac
case $- in *u*) echo "u in \$-" ;; esac
echo "$SHELLOPTS" | tr : '\n' | grep -E '^(errexit|nounset|hashall)$'
