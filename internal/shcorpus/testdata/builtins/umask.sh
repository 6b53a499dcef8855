umask 022
umask
umask -S
