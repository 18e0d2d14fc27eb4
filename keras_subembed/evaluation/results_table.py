"""A results table as aligned text columns."""


def format_table(rows, columns):
    """The lines of a table: a header, then one line per row, columns aligned.

    Args:
        rows: list of dicts. A value that is None prints as "-", a key the
            row lacks as an empty cell (a sub-row that shows a few columns).
        columns: list of `(key, title, format)`, e.g.
            `("cosine", "cos", "{:.3f}")`.

    Example:
    >>> print("\\n".join(format_table(
    ...     [{"name": "teacher", "cosine": 1.0}, {"name": "student", "cosine": None}],
    ...     [("name", "model", "{}"), ("cosine", "cos", "{:.3f}")])))
    model    cos
    teacher  1.000
    student  -
    """
    lines = [[title for _, title, _ in columns]]
    for index, row in enumerate(rows):
        lines.append(["" if key not in row else "-" if row[key] is None
                      else _cell(fmt, row[key], key, index) for key, _, fmt in columns])
    widths = [max(len(line[i]) for line in lines) for i in range(len(columns))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip()
            for line in lines]


def _cell(fmt, value, key, index):
    try:
        return fmt.format(value)
    except (ValueError, TypeError) as error:
        raise ValueError(f"Column {key!r} of row {index}: its format {fmt!r} cannot print "
                         f"{value!r} ({error}).") from None
