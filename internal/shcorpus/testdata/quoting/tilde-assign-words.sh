HOME=/home/tester
echo a=~/p --prefix=~/p a=~/p:~/q x:~/p a=~ 'a'=~/p a=b~/p A_1=~ a=x=~ 1a=~/p
for w in PATH=~/bin:/usr/bin; do echo "$w"; done
cd /tmp && OLDPWD=/old && echo d=~+ e=~-
printf '%s\n' "q=~/p" q="~/p"
