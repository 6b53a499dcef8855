for ((i=0, j=10; i<3; i++, j-=2)); do echo "$i $j"; done
