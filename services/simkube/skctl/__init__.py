"""skctl: the command-line tool users drive the product with."""
