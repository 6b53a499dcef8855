echo {a,b,c}
echo x{1..3}y
echo {5..1..2}
echo {a..e}
echo pre{,fix}
echo {01..03}
echo "{not,expanded}"
