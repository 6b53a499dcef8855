ls /nope 2> err.txt
grep -c $'\e' err.txt
cat err.txt
nosuchcmd-q 2> err2.txt
cat err2.txt | od -c | grep -c '033' 
echo end
