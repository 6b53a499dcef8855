type -t echo
type -t cat
type -t if
command -v echo
command -v nonexistent-cmd-zz || echo "not found: $?"
alias ll='ls -l'
type -t ll 2>/dev/null || echo "aliases off in scripts"
