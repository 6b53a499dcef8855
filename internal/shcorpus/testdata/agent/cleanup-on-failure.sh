set -euo pipefail
trap 'echo "cleanup (status $?)"' EXIT
step() { echo "step $1"; [ "$1" != 2 ]; }
step 1
step 2
step 3
