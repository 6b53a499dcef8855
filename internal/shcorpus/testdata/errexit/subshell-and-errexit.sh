set -e
(cd /nonexistent-dir-q 2>/dev/null && echo no) || echo "cd in subshell failed"
mkdir -p work && (cd work && touch made) && ls work
