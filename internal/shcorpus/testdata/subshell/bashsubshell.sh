echo $BASH_SUBSHELL
( echo $BASH_SUBSHELL; ( echo $BASH_SUBSHELL ) )
echo $(echo $BASH_SUBSHELL)
