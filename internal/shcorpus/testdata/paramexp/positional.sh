set -- one "two three" four
echo "$1|$2|$3|$#"
echo "${@:2}"
echo "${@: -1}"
shift
echo "$1"
shift 2
echo "$# left"
