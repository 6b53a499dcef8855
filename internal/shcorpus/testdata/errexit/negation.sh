set -e
! true
echo "reached: ! suppresses errexit"
! false
echo still here
