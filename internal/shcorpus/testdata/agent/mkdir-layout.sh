set -e
mkdir -p app/{src,test,docs}
touch app/src/{main,util}.go
ls app
ls app/src
