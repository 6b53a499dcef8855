unset nothing; echo "[${nothing[@]:-dflt}]" "[${nothing[@]-d2}]" "[${nothing[*]:-d3}]" "[${nothing[@]:+alt}]" "[${nothing[@]+alt2}]"
e=(); echo "[${e[@]:-dflt}]" "[${e[@]-d2}]" "[${e[@]:+alt}]" "[${e[@]+alt2}]"
one=(""); echo "[${one[@]:-dflt}]" "[${one[@]-d2}]" "[${one[@]:+alt}]" "[${one[@]+alt2}]"
full=(a b); echo "[${full[@]:-dflt}]" "[${full[@]:+alt}]"
set --; echo "[${@:-noargs}]" "[${*:-noargs2}]"
set -- ""; echo "[${@:-emptyarg}]" "[${@-x}]"
printf '<%s>' ${nothing[@]:-a b}; echo
printf '<%s>' "${nothing[@]:-a b}"; echo
set -u
echo "[${nothing[@]:-x}]" "[${nothing[@]+y}]"
set -- 
echo "[${@:-none}]"
e=(); echo "[${e[@]:-dd}]"
e=(); printf '<%s>' "${e[@]+x}" "${e[*]+y}" "${e[@]:+z}" "${e[@]@Q}" "${e[@]/a/b}"; echo
set --; printf '<%s>' "${@+x}" "${*:+y}" "${@@Q}"; echo
