printf '%s\n' hello
printf '%s-%s\n' a b c d
printf '%d %i\n' 42 -7
printf 'no newline'
printf '\n'
