mkdir d && touch d/x.tmp d/y.tmp d/keep.txt
ls d/*.tmp | xargs rm
ls d
printf 'a\nb\n' | xargs -I{} echo "item {}"
