# jobs -l, -p, -r, -s, jobspecs and -x, with bash's marks and errors.
sleep 5 &
sleep 6 &
jobs -l | sed -E 's/ +[0-9]+ Running/ PID Running/'
[ "$(jobs -p | tr '\n' ' ')" = "$(jobs -l | awk '{print $2}' | tr '\n' ' ')" ] && echo pids-agree
jobs -r
jobs -s; echo "stopped $?"
jobs %2
jobs -x echo %1 | grep -qE '^[0-9]+$' && echo x-ok
jobs %9; echo "rc=$?"
jobs -z; echo "rc=$?"
kill %1 %2
wait
echo done
