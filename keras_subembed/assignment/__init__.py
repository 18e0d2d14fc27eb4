"""Index assignment for `SubEmbedding`: which sub-table rows each token uses."""

from keras_subembed.assignment.clustered import clustered_codes
from keras_subembed.assignment.code_space import minimum_rows_per_table
from keras_subembed.assignment.code_space import ordinary_capacity
from keras_subembed.assignment.digits import digit_codes
from keras_subembed.assignment.packing import pack_codes
from keras_subembed.assignment.packing import unpack_codes
from keras_subembed.assignment.product import product_codes
from keras_subembed.assignment.product import shared_code_tokens
from keras_subembed.assignment.product import sub_widths
from keras_subembed.assignment.random_codes import random_codes
from keras_subembed.assignment.reconstruction import least_squares_sub_tables
from keras_subembed.assignment.reconstruction import reconstruction_quality
from keras_subembed.assignment.registry import ASSIGNMENTS
from keras_subembed.assignment.registry import Assignment
from keras_subembed.assignment.registry import fit_codes
from keras_subembed.assignment.registry import get_assignment
from keras_subembed.assignment.registry import register_assignment
from keras_subembed.assignment.rotation import product_rotation
from keras_subembed.assignment.validation import check_codes

__all__ = [
    "ASSIGNMENTS",
    "Assignment",
    "check_codes",
    "clustered_codes",
    "digit_codes",
    "fit_codes",
    "get_assignment",
    "least_squares_sub_tables",
    "minimum_rows_per_table",
    "ordinary_capacity",
    "pack_codes",
    "product_codes",
    "product_rotation",
    "random_codes",
    "reconstruction_quality",
    "register_assignment",
    "shared_code_tokens",
    "sub_widths",
    "unpack_codes",
]
