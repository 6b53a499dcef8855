set -euo pipefail
die() { echo "error: $*" >&2; exit 1; }
[ -f config.json ] || die "config.json not found"
echo REACHED
