set -o pipefail
! false | true
echo "status $?"
! true | true
echo "status $?"
