# $! of a background program is the program's own PID: ps, kill -0 and
# jobs -p know it by that number.
sleep 5 &
pid=$!
ps -o comm= -p "$pid"
kill -0 "$pid" && echo alive
[ "$(jobs -p)" = "$pid" ] && echo jobs-p
kill "$pid"
wait "$pid"
echo "status $?"
kill -0 "$pid" 2>/dev/null || echo gone
