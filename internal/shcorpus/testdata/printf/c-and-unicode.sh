printf '%c%c\n' hello world
printf '\u00e9\n'
printf '%s\n' 'é'
