printf '%s|%s|%d\n' only
printf '%s\n'
