mkdir -p p/q
touch p/a.md p/q/b.md p/q/c.txt
find p -name '*.md' | sort
find p -type f | wc -l
