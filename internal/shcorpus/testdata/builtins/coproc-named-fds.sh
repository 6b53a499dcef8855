coproc UPPER { tr a-z A-Z; }
echo "hello coproc" >&"${UPPER[1]}"
exec {UPPER[1]}>&-
read -r line <&"${UPPER[0]}"
echo "$line"
wait
coproc cat
echo one >&"${COPROC[1]}"
exec {COPROC[1]}>&-
cat <&"${COPROC[0]}"
wait
exec {fd}>out.txt
echo "fd ok: $(( fd >= 10 ))"
echo data >&$fd
exec {fd}>&-
cat out.txt
echo via-named {out}>named.txt >&$out
echo "still open: $([ -n "$out" ] && echo yes)"
echo more >&$out
exec {out}>&-
cat named.txt
exec {in}<named.txt
read -r first <&$in
echo "first=$first"
exec {in}<&-
echo "closed: $?"
