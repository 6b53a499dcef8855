sort -u <(printf 'b\na\nb\n') <(printf 'c\na\n')
