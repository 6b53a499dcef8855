printf '[%5s][%-5s][%.2s]\n' ab ab abcdef
printf '[%05d][%-4d][%+d]\n' 42 7 3
printf '[%*s]\n' 6 right
