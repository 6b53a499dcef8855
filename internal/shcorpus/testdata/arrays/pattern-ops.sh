a=(file1.txt file2.txt readme.md)
echo "${a[@]%.txt}"
echo "${a[@]/file/doc}"
echo "${a[@]^}"
echo "${a[@]#*e}"
