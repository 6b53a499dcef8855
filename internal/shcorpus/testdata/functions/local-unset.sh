x=outer
f() { local x; echo "[${x-unset}]"; x=inner; unset x; echo "[${x-unset}]"; }
f
echo "$x"
