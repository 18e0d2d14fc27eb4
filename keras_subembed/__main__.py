"""`python -m keras_subembed shrink MODEL --budget-mb 31 --output DIR` (see `--help`)."""

import sys

from keras_subembed.recipe.cli import main

if __name__ == "__main__":
    sys.exit(main())
