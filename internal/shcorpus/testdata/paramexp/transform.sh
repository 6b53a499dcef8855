s="it's"
echo "${s@Q}"
t='a\tb'
echo "${t@E}"
u=lower
echo "${u@U} ${u@u}"
