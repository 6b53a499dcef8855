s=abcdefgh
echo "${s:2} ${s:2:3} ${s: -3} ${s: -3:2} ${s:0:1}"
echo "${s:10}."
