cat <(echo from-procsubst)
