printf 'one \\\ntwo\n' | { read line; echo "[$line]"; }
printf 'one \\\ntwo\n' | { read -r line; echo "[$line]"; }
