printf 'a\nb' > f
while read -r l || [ -n "$l" ]; do echo "[$l]"; done < f
