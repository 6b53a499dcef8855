set -Z
echo "status $?"
