trap 'echo bye' EXIT
trap 'echo int' INT
trap -p | sort
saved=$(trap -p EXIT); echo "saved: $saved"
( trap 'echo sub' TERM; trap -p )
( trap -p INT )
trap - INT
trap
