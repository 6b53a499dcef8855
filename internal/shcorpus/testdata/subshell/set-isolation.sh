( set -e; false; echo REACHED )
echo "after: $?"
( set -u; echo "$nope" ) 2>/dev/null
echo "after: $?"
