a=$RANDOM
case $a in ''|*[!0-9]*) echo bad ;; *) [ "$a" -le 32767 ] && echo "RANDOM in range" ;; esac
