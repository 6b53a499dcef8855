while getopts "xy:" o -x -y 5; do echo "$o ${OPTARG:-}"; done
