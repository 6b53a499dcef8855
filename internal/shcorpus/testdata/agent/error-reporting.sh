set -Eeuo pipefail
trap 'echo "failed at line $LINENO: $BASH_COMMAND" >&2' ERR
echo step1
cat missing-file.txt
echo REACHED
