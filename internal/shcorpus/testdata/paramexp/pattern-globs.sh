f=main_test.go
echo "${f%_test.go}"
echo "${f/[_.]/-}"
echo "${f//[_.]/-}"
case $f in *_test.go) echo test file ;; esac
