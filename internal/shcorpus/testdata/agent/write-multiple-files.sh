set -e
declare -A files=(
  [README.md]="# Project"
  [src/main.py]="print('hi')"
  [tests/test_main.py]="def test(): pass"
)
for path in "${!files[@]}"; do
  mkdir -p "$(dirname "$path")"
  printf '%s\n' "${files[$path]}" > "$path"
done
find . -type f ! -name s.sh | sort
cat src/main.py
