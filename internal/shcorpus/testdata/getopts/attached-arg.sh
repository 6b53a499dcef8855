set -- -ofile.txt -v
while getopts "o:v" o; do echo "$o=${OPTARG:-}"; done
