printf 'h\na\nb\nc\nd\n' > f
mapfile -t -s 1 -n 2 rows < f
echo "${rows[*]}"
mapfile rows2 < f
printf '%q\n' "${rows2[0]}"
