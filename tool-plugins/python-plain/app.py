"""The csv-stats component: exports `csv.summarize` (wit/csv-stats.wit) over csvstats.py.
Files are opened with plain open(), which wasi-libc resolves against the directories the host
preopened, by their names."""

# componentize-py snapshots the interpreter after importing this module, and nothing can be
# imported after that: the codec open() looks up by name must already be loaded.
import encodings.utf_8_sig  # noqa: F401

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports import csv as types

import csvstats

KINDS = {
    "numeric": types.ColumnKind.NUMERIC,
    "text": types.ColumnKind.TEXT,
    "empty": types.ColumnKind.EMPTY,
}


class Csv(exports.Csv):
    def summarize(self, path, options):
        try:
            table = csvstats.summarize_file(
                path, options.delimiter, options.max_rows, options.columns
            )
        except csvstats.CsvStatsError as error:
            raise Err(str(error))
        except Exception as error:  # never trap the component on a bug: report it
            raise Err(f"internal error in csv-stats: {type(error).__name__}: {error}")
        return types.TableSummary(
            rows=table.rows,
            columns=[
                types.ColumnSummary(
                    name=column.name,
                    kind=KINDS[column.kind],
                    non_empty=column.non_empty,
                    min=column.minimum,
                    max=column.maximum,
                    mean=column.mean,
                    distinct=column.distinct,
                )
                for column in table.columns
            ],
        )
