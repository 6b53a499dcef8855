set -e
mkdir -p out
if ! cp nonexistent.txt out/ 2> err.log; then
  echo "copy failed"
fi
grep -c $'\033' err.log || echo "no escape codes"
