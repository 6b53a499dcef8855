set -e
false | echo "middle ok" | cat
echo "reached: only the last status counts without pipefail"
