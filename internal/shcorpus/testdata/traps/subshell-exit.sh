trap 'echo outer exit' EXIT
( trap 'echo inner exit' EXIT; echo in subshell )
echo back
