enable -a | grep -cw 'echo'
help true | head -n 1
