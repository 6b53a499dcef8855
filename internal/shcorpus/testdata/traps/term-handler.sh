trap 'echo caught TERM; exit 143' TERM
kill -TERM $$
echo REACHED
