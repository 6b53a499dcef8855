set -euo pipefail
work=./work.tmp
mkdir -p "$work"
trap 'rm -rf "$work"; echo cleaned' EXIT
echo data > "$work/file"
cat "$work/file"
