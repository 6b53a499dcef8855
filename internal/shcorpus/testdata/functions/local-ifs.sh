split() { local IFS=,; set -- $1; echo "$#: $*"; }
split "a,b,c"
echo "IFS unchanged: $(printf '%q' "$IFS")"
