# Usage: metrale-codegen schema <FILE>
help schema
