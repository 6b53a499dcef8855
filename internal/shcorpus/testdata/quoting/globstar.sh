mkdir -p a/b/c && touch a/x.txt a/b/y.txt a/b/c/z.txt
shopt -s globstar
echo **/*.txt
