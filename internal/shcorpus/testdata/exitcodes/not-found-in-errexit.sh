set -e
missing-binary-xyz
echo REACHED
