# The short help lists the values: [possible values: offset, plan] and
# [possible values: layer, kind, lifetime].
plan -h
