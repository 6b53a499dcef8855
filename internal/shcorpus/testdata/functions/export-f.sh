greet() { echo "exported hi"; }
export -f greet
bash -c greet
