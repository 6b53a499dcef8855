set -e
trap 'echo "failed: $BASH_COMMAND"' ERR
echo start
ls /nonexistent-dir 2>/dev/null
echo REACHED
