echo *.nomatch
shopt -s nullglob
echo *.nomatch end
shopt -u nullglob
shopt -s failglob
echo *.nomatch
echo "status $?"
