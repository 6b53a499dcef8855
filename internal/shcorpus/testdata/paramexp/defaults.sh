unset u; e=
echo "${u-dash} ${u:-colon} ${e-dash}. ${e:-colon}"
echo "${u+plus}. ${e+plus} ${e:+cplus}."
echo "${u=assigned} $u"
echo "${e:=filled} $e"
