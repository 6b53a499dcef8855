set -e
read -r v < <(echo value)
echo "v=$v"
read -r w < /dev/null || echo "read at EOF fails: $?"
echo end
