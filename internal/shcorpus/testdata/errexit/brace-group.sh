set -e
{ echo in group; false; echo REACHED in group; }
echo REACHED
