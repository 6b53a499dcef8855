printf -- '--flag\n'
printf '%s\n' -n
