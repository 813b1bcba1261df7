# -o <FILE>, --runtime-path <PATH> [default: ::metrale_circuit].
gen --help
