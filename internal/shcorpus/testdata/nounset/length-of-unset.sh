set -u
echo "${#undefined}"
echo REACHED
