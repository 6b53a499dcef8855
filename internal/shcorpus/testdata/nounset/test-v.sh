set -u
if [[ -v maybe ]]; then echo set; else echo unset; fi
maybe=
if [[ -v maybe ]]; then echo set; else echo unset; fi
