mapfile -t a < <(printf 'one\ntwo\nthree\n')
echo "${#a[@]}: ${a[1]}"
printf '[%s]\n' "${a[@]}"
