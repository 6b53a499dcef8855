set -- -x -a
while getopts "a" o; do echo "got $o"; done
