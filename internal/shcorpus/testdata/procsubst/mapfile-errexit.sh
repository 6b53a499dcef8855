set -e
mapfile -t files < <(printf '%s\n' c.txt a.txt b.txt | sort)
for f in "${files[@]}"; do echo "$f"; done
echo "n=${#files[@]}"
