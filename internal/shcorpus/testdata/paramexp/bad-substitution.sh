echo start
echo "${x!!}"
echo REACHED
