cat <(cat <(echo nested-twice))
