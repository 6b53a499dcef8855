s='tab\there'
printf '%s|%b\n' "$s" "$s"
printf '%b\n' '\0101' '\x41\c' 'not reached'
echo
