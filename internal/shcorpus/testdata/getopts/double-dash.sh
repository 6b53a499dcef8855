set -- -a -- -b
while getopts "ab" o; do echo "opt $o"; done
shift $((OPTIND-1))
echo "args: $*"
