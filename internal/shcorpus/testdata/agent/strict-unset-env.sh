set -euo pipefail
: "${CI:=false}"
echo "CI=$CI"
echo "MODE=${MODE:-dev}"
echo "$UNSET_TOKEN"
echo REACHED
