printf 'x=1\ny=2\nz=3\n' > vars
mapfile -t lines < <(grep -v '^y' vars)
echo "${#lines[@]} lines: ${lines[*]}"
