echo one
missing_command_one arg
echo two
