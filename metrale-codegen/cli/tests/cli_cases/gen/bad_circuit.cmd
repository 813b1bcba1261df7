# The located diagnostic: the kind on line 5, its string at col 8; nothing on stdout.
gen $DIR/bad_circuit.toml
