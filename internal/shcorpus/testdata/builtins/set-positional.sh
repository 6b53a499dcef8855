set -- c b a
echo "$*"
set -- $(printf '%s\n' "$@" | sort)
echo "$*"
set --
echo "$#"
