set -- -1 -2 x
while getopts "12" o; do echo "opt $o"; done
echo "OPTIND=$OPTIND"
