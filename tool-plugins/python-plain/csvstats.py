"""Column statistics of a CSV table in plain Python (the standard csv module only), so that
they are tested under a native interpreter; app.py turns them into the WIT types."""

import csv
import re
from dataclasses import dataclass
from typing import Optional

# A decimal number as people write it in tables: no `nan`, `inf` or `1_000`, which float()
# would also accept and which are usually text in a CSV file (a name such as "Nan").
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")

# The delimiter is detected from this much of the file.
SNIFF_CHARS = 64 * 1024
CANDIDATE_DELIMITERS = ",;\t|"
# Spellings of the tab a caller may use instead of the character itself.
TAB_NAMES = {"\\t", "tab", "TAB"}


class CsvStatsError(Exception):
    """A problem reported to the caller as it is."""


@dataclass
class Column:
    name: str
    kind: str  # "numeric", "text" or "empty"
    non_empty: int
    minimum: Optional[float]
    maximum: Optional[float]
    mean: Optional[float]
    distinct: int


@dataclass
class Table:
    rows: int
    columns: list


class _Accumulator:
    def __init__(self, name):
        self.name = name
        self.non_empty = 0
        self.values = set()
        self.numeric = True
        self.count = 0
        self.total = 0.0
        self.minimum = None
        self.maximum = None

    def add(self, cell):
        cell = cell.strip()
        if not cell:
            return
        self.non_empty += 1
        self.values.add(cell)
        if not self.numeric:
            return
        if not NUMBER.fullmatch(cell):
            self.numeric = False
            return
        value = float(cell)
        self.count += 1
        self.total += value
        self.minimum = value if self.minimum is None else min(self.minimum, value)
        self.maximum = value if self.maximum is None else max(self.maximum, value)

    def column(self):
        if self.non_empty == 0:
            kind = "empty"
        elif self.numeric:
            kind = "numeric"
        else:
            kind = "text"
        numeric = kind == "numeric"
        return Column(
            name=self.name,
            kind=kind,
            non_empty=self.non_empty,
            minimum=self.minimum if numeric else None,
            maximum=self.maximum if numeric else None,
            mean=self.total / self.count if numeric else None,
            distinct=len(self.values),
        )


def choose_delimiter(sample, given):
    """The delimiter given (checked), else the one the sample suggests, else a comma."""
    if given is not None:
        if given in TAB_NAMES:
            return "\t"
        if len(given) != 1 or given in "\r\n\"":
            raise CsvStatsError(f"the delimiter must be one character other than a quote or line break, not {given!r}")
        return given
    # Only whole lines: a cut line can mislead the sniffer.
    complete = sample[: sample.rfind("\n") + 1] or sample
    try:
        return csv.Sniffer().sniff(complete, delimiters=CANDIDATE_DELIMITERS).delimiter
    except csv.Error:
        return ","


def select(names, wanted):
    """Indexes of the wanted columns: by exact name, else ignoring case and surrounding spaces."""
    if not wanted:
        return list(range(len(names)))
    folded = [name.strip().casefold() for name in names]
    indexes, missing = [], []
    for name in wanted:
        if name in names:
            indexes.append(names.index(name))
        elif name.strip().casefold() in folded:
            indexes.append(folded.index(name.strip().casefold()))
        else:
            missing.append(name)
    if missing:
        raise CsvStatsError(
            f"no column named {', '.join(repr(name) for name in missing)}; "
            f"the columns are: {', '.join(names) or '(none)'}"
        )
    return indexes


def summarize(stream, label, delimiter=None, max_rows=None, columns=()):
    """Summarizes the CSV text of the seekable text `stream`; `label` names it in errors."""
    sample = stream.read(SNIFF_CHARS)
    stream.seek(0)
    delimiter = choose_delimiter(sample, delimiter)
    reader = csv.reader(stream, delimiter=delimiter)
    try:
        header = next(reader, None)
        if header is None:
            raise CsvStatsError(f"{label} is empty: there is no header row")
        names = [cell.strip() or f"column {index + 1}" for index, cell in enumerate(header)]
        indexes = select(names, list(columns))
        accumulators = [_Accumulator(names[index]) for index in indexes]
        rows = 0
        for row in reader:
            if max_rows is not None and rows >= max_rows:
                break
            if not row:
                continue
            rows += 1
            for accumulator, index in zip(accumulators, indexes):
                accumulator.add(row[index] if index < len(row) else "")
    except csv.Error as error:
        raise CsvStatsError(f"{label}, line {reader.line_num}: not readable as CSV: {error}") from error
    return Table(rows=rows, columns=[accumulator.column() for accumulator in accumulators])


def summarize_file(path, delimiter=None, max_rows=None, columns=()):
    """Summarizes the CSV file at `path`, which open() resolves (in the component, against
    the preopened directories)."""
    try:
        # utf-8-sig: a byte-order mark, as spreadsheet programs write, is not part of the
        # first column's name.
        with open(path, newline="", encoding="utf-8-sig") as stream:
            return summarize(stream, path, delimiter, max_rows, columns)
    except UnicodeDecodeError as error:
        raise CsvStatsError(f"{path}: not UTF-8 text ({error.reason})") from error
    except FileNotFoundError as error:
        raise CsvStatsError(f"{path}: no such file") from error
    except IsADirectoryError as error:
        raise CsvStatsError(f"{path}: is a directory, not a file") from error
    except PermissionError as error:
        raise CsvStatsError(f"{path}: permission denied") from error
    except OSError as error:
        raise CsvStatsError(f"{path}: {error.strerror or error}") from error
