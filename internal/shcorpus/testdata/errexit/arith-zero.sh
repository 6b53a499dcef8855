set -e
i=0
(( i++ ))
echo REACHED
