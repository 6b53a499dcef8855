echo $'tab\tnewline\nend'
echo $'quote\' and \x41 and \101 and \u00e9'
printf '%s\n' $'a\\b'
