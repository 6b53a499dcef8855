set -e
x=$(false; echo "reached in subst: no inherit_errexit")
echo "$x"
