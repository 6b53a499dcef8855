( [ "$BASHPID" != "$$" ] && echo "background subshell has its own BASHPID" ) &
wait
