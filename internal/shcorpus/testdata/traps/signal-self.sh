trap 'echo got USR1' USR1
kill -USR1 $$
echo after
