mkdir src && touch src/a.c src/b.c src/c.h
for f in src/*.c; do echo "compile $f -> ${f%.c}.o"; done
for f in src/*.none; do echo "literal: $f"; done
