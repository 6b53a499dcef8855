mkdir -p build && (cd build && echo "in $(basename "$PWD")") && echo ok
(false && echo no) || echo "recovered"
