for w in $(cat <(echo "x y z")); do echo "w=$w"; done
