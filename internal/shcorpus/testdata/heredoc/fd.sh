cat 3<<EOF <&3
from fd three
EOF
