set -o pipefail
(exit 3) | (exit 4) | true
echo "status $?"
(exit 3) | true | true
echo "status $?"
