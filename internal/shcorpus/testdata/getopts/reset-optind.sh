set -- -a
getopts a o; echo "$o $OPTIND"
OPTIND=1
getopts a o; echo "$o $OPTIND"
getopts a o; echo "$o $OPTIND status $?"
