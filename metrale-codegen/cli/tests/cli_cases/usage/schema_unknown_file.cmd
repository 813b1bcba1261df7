# Any file but the two is a usage error naming the valid ones.
schema circuits
