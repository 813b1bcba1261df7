# The missing argument is named, with the usage `metrale-codegen plan <circuit.toml>`.
plan
