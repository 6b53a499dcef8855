command -v printf
command -V true | head -n 1
type printf
