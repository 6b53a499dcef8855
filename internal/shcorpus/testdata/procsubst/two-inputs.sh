paste <(seq 3) <(printf 'x\ny\nz\n')
