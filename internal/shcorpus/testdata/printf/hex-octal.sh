printf '%x %X %o %#x %#o\n' 255 255 8 255 8
printf '%d\n' 0x10 010 "'A"
