echo \$x \"x\" \\ a\ b
echo "a\nb" 'a\nb'
echo \
continued
