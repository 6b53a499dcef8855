set -e
trap 'rc=$?; echo "exiting with $rc"; exit $rc' EXIT
grep -q needle <<< "haystack"
echo REACHED
