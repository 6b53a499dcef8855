[ "$BASHPID" = "$$" ] && echo "top level: BASHPID is \$\$"
( [ "$BASHPID" != "$$" ] && echo "subshell: BASHPID differs" )
[ -n "$PPID" ] && [ "$PPID" -gt 0 ] && echo "PPID is a number"
case $BASHPID in *[!0-9]*) echo "not numeric" ;; *) echo "numeric" ;; esac
