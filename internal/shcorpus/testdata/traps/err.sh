trap 'echo "ERR trap: status $?"' ERR
false
echo after
(exit 4)
echo end
