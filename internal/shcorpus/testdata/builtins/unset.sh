a=1 b=2
unset a
echo "[${a-unset}] $b"
unset -v b
echo "[${b-unset}]"
unset not_set_at_all
echo "status $?"
