[ -n a -a -n b ] && echo and
[ -z a -o -n b ] && echo or
[[ -n a && ( -z "" || -z b ) ]] && echo grouped
[ ! -e nope ] && echo negated
