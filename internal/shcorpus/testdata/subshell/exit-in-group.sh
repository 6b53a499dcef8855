{ echo in group; exit 4; }
echo REACHED
