kind() {
  case $1 in
    *.go) return 0 ;;
    *.js|*.ts) return 1 ;;
  esac
  return 2
}
for f in a.go b.ts c.md; do kind "$f"; echo "$f $?"; done
