printf 'l1\nl2\n' > in.txt
exec 3< in.txt
read -r -u 3 a; read -r -u 3 b; echo "$a $b"
exec 3<&-
while getopts ":ab:c" o -a -b val -c -x; do case $o in a|c) echo "flag $o";; b) echo "b=$OPTARG";; \?) echo "bad -$OPTARG";; esac; done
set -- -a -b val rest; OPTIND=1; while getopts "ab:" o; do :; done; shift $((OPTIND-1)); echo "rest: $*"
echo "${SECONDS:+has-seconds}"
x=$(printf '%s,' a b c); echo "${x%,}"
echo "$(basename /a/b/c.txt .txt) $(dirname /a/b/c.txt)"
n=0; while read -r line; do ((n++)) || true; done < in.txt; echo "n=$n"
{ echo a; echo b; } > grp.txt; wc -l < grp.txt
echo hi >> grp.txt; tail -n1 grp.txt
cat grp.txt | head -1
[[ -f in.txt && ! -d in.txt ]] && echo file
test -s in.txt && echo nonempty
[ "$(wc -l < in.txt)" -eq 2 ] && echo two
