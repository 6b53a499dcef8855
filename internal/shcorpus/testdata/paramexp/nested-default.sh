a=
b=fromb
echo "${a:-${b:-none}}"
echo "${missing:-${also:-deep default}}"
