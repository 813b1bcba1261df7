# The missing argument is named, with the usage `metrale-codegen check <circuit.toml>...`.
check
