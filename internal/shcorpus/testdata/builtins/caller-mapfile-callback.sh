printf 'a\nb\nc\nd\n' > f
mapfile -t -C 'echo cb' -c 2 arr < f
echo "${#arr[@]}"
