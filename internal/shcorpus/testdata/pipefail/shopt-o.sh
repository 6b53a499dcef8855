set -o pipefail
shopt -po pipefail
set +o pipefail
shopt -po pipefail
set -o | grep pipefail
