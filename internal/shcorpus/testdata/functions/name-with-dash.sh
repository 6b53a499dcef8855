my-func() { echo "dash name ok"; }
my-func
