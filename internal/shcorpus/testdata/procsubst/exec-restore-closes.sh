exec 4>&1
exec > >(tr a-z A-Z > upper.txt)
pid=$!
echo hello
exec >&4 4>&-
wait "$pid"
echo "wait status $?"
cat upper.txt
case $pid in ''|*[!0-9]*) echo "no pid: $pid" ;; *) echo "pid is a number" ;; esac
exec 5> five.txt
echo five >&5
exec 5> other.txt
cat five.txt
