mkdir -p src
printf 'TODO: a\nok\nTODO: b\n' > src/a.go
printf 'fine\n' > src/b.go
grep -rl TODO src | sort
grep -c TODO src/a.go
grep -rn 'TODO' src | sort
