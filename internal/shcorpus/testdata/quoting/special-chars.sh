echo 'a|b&c;d<e>f(g)h'
echo "*?[]" '*?[]'
echo '#not a comment' # a comment
echo a#b
