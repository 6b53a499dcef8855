set -o pipefail
printf 'a\nb\nc\n' | head -n 1
echo "status $?"
