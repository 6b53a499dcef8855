# Agents read stderr through pipes: error messages must be plain text.
nosuchcmd-color 2>&1 | od -c | grep -c '033'
ls /nope 2>&1 | od -c | grep -c '033'
set -u
( echo "$unset_color_var" ) 2>&1 | od -c | grep -c '033'
echo end
