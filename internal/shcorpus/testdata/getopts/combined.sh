set -- -ab value -c rest
while getopts "ab:c" o; do echo "$o ${OPTARG-}"; done
echo "OPTIND=$OPTIND"
