enable -a | grep -cw 'echo'
enable | grep -c 'enable printf'
help true | head -n 1
help -s echo
help nosuchthing; echo "status $?"
enable -n echo
type -t echo >/dev/null; echo x | cat
echo via-program
enable echo
enable nosuch; echo "status $?"
