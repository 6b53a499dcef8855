declare -a arr=(1 2 3)
declare -p arr
arr[1]=two
declare -p arr
