a=(1 2)
echo "${a[-5]}"
echo "status $?"
echo x${a[-3]}y ${a[-2]} "${a[-1]}"
i=-9; echo "[${a[i]}]" "[${a[$i]}]"
echo "${#a[@]}"
