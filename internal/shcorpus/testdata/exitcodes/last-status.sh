false
