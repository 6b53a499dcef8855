echo `echo \$HOME | tr A-Z a-z`
echo `echo '\\'`
