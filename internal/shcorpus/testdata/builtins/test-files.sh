touch f; mkdir d; echo data > nonempty
[ -f f ] && echo "f is file"
[ -d d ] && echo "d is dir"
[ -e nothing ] || echo "nothing missing"
[ -s nonempty ] && echo "nonempty has size"
[ -s f ] || echo "f is empty"
[ -r f ] && echo readable
