set -o errexit
echo "$-" | grep -q e && echo "e is set"
shopt -po errexit
command-that-does-not-exist-xyz
echo REACHED
