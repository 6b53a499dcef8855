: "${needed?}"
echo REACHED
