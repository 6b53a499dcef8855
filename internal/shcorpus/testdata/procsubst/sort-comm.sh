comm -12 <(printf 'b\na\nc\n' | sort) <(printf 'c\nd\nb\n' | sort)
