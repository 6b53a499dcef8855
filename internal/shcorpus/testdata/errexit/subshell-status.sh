set -e
( exit 7 ) || echo "subshell failed with $?"
echo end
