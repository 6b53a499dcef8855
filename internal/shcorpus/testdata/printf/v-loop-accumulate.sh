out=
for i in 1 2 3; do printf -v out '%s%02d,' "$out" "$i"; done
echo "$out"
