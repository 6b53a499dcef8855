set -eo pipefail
(exit 9) | cat
echo REACHED
