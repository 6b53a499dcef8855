trap 'echo "trap sees $?"' EXIT
(exit 4) || exit
