set -e
set +e
false
echo "reached after set +e: $?"
set -e
false
echo REACHED
