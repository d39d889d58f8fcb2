"""Unit tests of csvstats.py under a native interpreter:
python3 -m unittest discover -s tool-plugins/python-plain"""

import io
import os
import tempfile
import unittest

from csvstats import CsvStatsError, choose_delimiter, summarize, summarize_file


def table(text, **options):
    return summarize(io.StringIO(text, newline=""), "t.csv", **options)


def by_name(result):
    return {column.name: column for column in result.columns}


class SummarizeTest(unittest.TestCase):
    def test_kinds_and_statistics(self):
        result = table(
            "city,population,area,notes\n"
            "Bern,134000,51.6,\n"
            "Basel, 173000 ,23.9,\"river, bridges\"\n"
            "Chur,37000,,\n"
            "Bern,-1e3,.5,\n"
        )
        self.assertEqual(result.rows, 4)
        columns = by_name(result)
        self.assertEqual(list(columns), ["city", "population", "area", "notes"])
        city = columns["city"]
        self.assertEqual((city.kind, city.non_empty, city.distinct), ("text", 4, 3))
        self.assertIsNone(city.minimum)
        self.assertIsNone(city.mean)
        population = columns["population"]
        self.assertEqual(population.kind, "numeric")
        self.assertEqual((population.minimum, population.maximum), (-1000.0, 173000.0))
        self.assertAlmostEqual(population.mean, (134000 + 173000 + 37000 - 1000) / 4)
        area = columns["area"]
        self.assertEqual((area.kind, area.non_empty), ("numeric", 3))
        self.assertAlmostEqual(area.mean, (51.6 + 23.9 + 0.5) / 3)
        self.assertEqual(columns["notes"].kind, "text")
        self.assertEqual(columns["notes"].non_empty, 1)

    def test_words_that_float_accepts_are_text(self):
        columns = by_name(table("a,b,c\nnan,1_000,inf\n"))
        self.assertEqual([c.kind for c in columns.values()], ["text", "text", "text"])

    def test_empty_columns_short_rows_and_blank_lines(self):
        result = table("a,b,c\n1\n\n2,,\n")
        self.assertEqual(result.rows, 2)
        columns = by_name(result)
        self.assertEqual(columns["a"].kind, "numeric")
        self.assertEqual((columns["b"].kind, columns["b"].non_empty, columns["b"].distinct), ("empty", 0, 0))
        self.assertIsNone(columns["c"].maximum)

    def test_blank_header_cells_get_positional_names(self):
        self.assertEqual([c.name for c in table("x,, \n1,2,3\n").columns], ["x", "column 2", "column 3"])

    def test_header_only_and_empty_files(self):
        result = table("a,b\n")
        self.assertEqual(result.rows, 0)
        self.assertEqual([c.kind for c in result.columns], ["empty", "empty"])
        with self.assertRaisesRegex(CsvStatsError, "t.csv is empty"):
            table("")

    def test_max_rows_and_column_selection(self):
        text = "id,Name,score\n1,a,10\n2,b,20\n3,c,30\n"
        result = table(text, max_rows=2, columns=["score", " name "])
        self.assertEqual(result.rows, 2)
        self.assertEqual([c.name for c in result.columns], ["score", "Name"])
        self.assertEqual(result.columns[0].maximum, 20.0)
        self.assertEqual(table(text, max_rows=0).rows, 0)
        with self.assertRaisesRegex(CsvStatsError, r"no column named 'price'; the columns are: id, Name, score"):
            table(text, columns=["price"])

    def test_delimiters_given_or_detected(self):
        semicolons = "a;b\n1,5;x\n2,5;y\n"
        self.assertEqual(by_name(table(semicolons))["b"].distinct, 2)
        tabs = "a\tb\n1\t2\n"
        self.assertEqual(len(table(tabs, delimiter="\\t").columns), 2)
        self.assertEqual(len(table(tabs).columns), 2)
        self.assertEqual(choose_delimiter("just one column\nvalue\n", None), ",")
        self.assertEqual(choose_delimiter("", "|"), "|")
        with self.assertRaisesRegex(CsvStatsError, "one character"):
            table("a,b\n", delimiter=",,")

    def test_unreadable_csv_names_the_line(self):
        with self.assertRaisesRegex(CsvStatsError, r"t.csv, line 3: not readable as CSV: field larger"):
            table("a\n1\n" + "x" * 200_000 + "\n")


class FileTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.addCleanup(self.directory.cleanup)

    def path(self, name, data):
        path = os.path.join(self.directory.name, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def test_a_byte_order_mark_is_not_part_of_the_first_name(self):
        path = self.path("bom.csv", b"\xef\xbb\xbfid,v\n1,2\n")
        self.assertEqual([c.name for c in summarize_file(path).columns], ["id", "v"])

    def test_file_errors_are_reported_by_path(self):
        missing = os.path.join(self.directory.name, "missing.csv")
        with self.assertRaisesRegex(CsvStatsError, "missing.csv: no such file"):
            summarize_file(missing)
        with self.assertRaisesRegex(CsvStatsError, "not UTF-8"):
            summarize_file(self.path("latin1.csv", b"name\nZ\xfcrich\n"))
        with self.assertRaisesRegex(CsvStatsError, "is a directory"):
            summarize_file(self.directory.name)


if __name__ == "__main__":
    unittest.main()
