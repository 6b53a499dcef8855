set -u
a=()
echo "${#a[@]}"
echo "${a[@]+set}" end
