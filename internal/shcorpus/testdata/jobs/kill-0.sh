sleep 2 &
pid=$!
kill -0 "$pid" && echo alive
kill "$pid"
wait "$pid" 2>/dev/null
kill -0 "$pid" 2>/dev/null || echo gone
