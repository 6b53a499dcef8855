declare -u up=hello
declare -l low=HELLO
echo "$up $low"
declare -x exported=1
bash -c 'echo "child sees $exported"'
declare -r ro=x
declare -p ro
