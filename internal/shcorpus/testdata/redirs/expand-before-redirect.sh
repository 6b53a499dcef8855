echo "$(ls /nonexistent-x)" 2>/dev/null
echo "${unset_v?custom message}" 2>/dev/null
echo after
x=$(echo sub >&2) 2>/dev/null
echo "[$x]"
f() { echo "in f $1" >&2; }
f "$(echo arg >&2)" 2>/dev/null
x=1 >/nonexistent/dir/f; echo "st $? x=$x"
y=$(echo v; exit 3) >out.txt; echo "st $? y=$y"; cat out.txt
z=$(echo sub >&2) 2>/dev/null; echo "z=[$z]"
diff <(echo a) <(echo b) > d.txt; echo "diff $?"; cat d.txt
