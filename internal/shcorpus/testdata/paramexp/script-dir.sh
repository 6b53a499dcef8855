SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
echo "$SCRIPT_DIR"
[ "$SCRIPT_DIR" = "$PWD" ] && echo "script dir is cwd"
echo "$(basename "$0")"
