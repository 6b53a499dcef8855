a=( $(cat <(printf 'p q r')) )
echo "${#a[@]} ${a[1]}"
