set -u
echo "args: $@."
echo "count: $#"
