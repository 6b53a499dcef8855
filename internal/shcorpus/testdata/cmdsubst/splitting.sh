for w in $(printf 'a b\nc\n'); do echo "[$w]"; done
for w in "$(printf 'a b\nc\n')"; do echo "[$w]"; done
