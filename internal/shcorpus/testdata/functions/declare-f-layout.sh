f() { echo "a $1"; local x=2; return 0; }
g() {
  if [[ -n $1 ]]; then
    echo yes
  else
    echo no
  fi
  for i in 1 2; do echo $i; done
  while false; do :; done
  case $1 in a) echo A;; *) echo other;; esac
  echo x | cat > /dev/null && echo ok || echo bad
}
declare -f f g
type f
h() {
  if (( $# > 1 )); then echo many; elif [[ $1 == x ]]; then echo x; else echo other; fi
  ( cd /tmp && ls >/dev/null 2>&1 )
  ! false
  sleep 0 &
  wait
  until true; do break; done
  case "$1" in a|b) echo ab;; esac
  local -a arr=(1 "2 3")
  arr+=(4)
  { echo grouped; echo two; } > /dev/null
  x=$(echo sub) y=2
  echo "${arr[@]}" | tr ' ' '\n' | sort -r
  return
}
declare -f h
k() { :; }
declare -f k
type k
m() {
  for f in *.txt; do
    [ -e "$f" ] || continue
    echo "$f"
  done
}
declare -f m
