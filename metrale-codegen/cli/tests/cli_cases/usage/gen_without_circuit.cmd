# The missing argument is named, with the usage `metrale-codegen gen <circuit.toml>`.
gen
