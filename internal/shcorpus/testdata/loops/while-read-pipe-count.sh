printf 'a\nb\nc\n' | while read -r l; do echo "$l"; done | wc -l
