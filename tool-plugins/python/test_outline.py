"""Unit tests of the outline logic under a native interpreter (no component involved):
python3 -m unittest discover -s tool-plugins/python"""

import textwrap
import unittest

from outline import OutlineError, is_private, outline

SOURCE = textwrap.dedent(
    '''\
    """Module docstring.

    More."""
    import typing

    if typing.TYPE_CHECKING:
        def typed_only(x: int) -> int: ...

    try:
        from fast import speedup
    except ImportError:
        def speedup(data, *, level=3):
            """Fallback."""
            return data


    @dataclass(frozen=True)
    class Point:
        x: int
        y: int

        @classmethod
        def origin(cls) -> "Point":
            return cls(0, 0)

        def __repr__(self):
            return "P"

        def _cache(self):
            pass

        class _Inner:
            def hidden(self):
                pass


    async def fetch(url, timeout=10.0, *args, retries: int = 3, **headers) -> bytes:
        """Fetches a URL.

        Long description."""
        async def attempt():
            pass
    '''
)


class OutlineTest(unittest.TestCase):
    def test_public_outline(self):
        self.assertEqual(
            outline("m.py", SOURCE),
            "\n".join(
                [
                    "m.py: 42 lines, 1 class, 4 functions, 2 methods (private names hidden)",
                    "module docstring: Module docstring.",
                    "",
                    "def typed_only(x: int) -> int  [L7]",
                    "def speedup(data, *, level=3)  [L12-14]  # Fallback.",
                    "@dataclass class Point  [L17-34]",
                    "  @classmethod def origin(cls) -> 'Point'  [L22-24]",
                    "  def __repr__(self)  [L26-27]",
                    "async def fetch(url, timeout=10.0, *args, retries: int=3, **headers) -> bytes"
                    "  [L37-42]  # Fetches a URL.",
                    "  async def attempt()  [L41-42]",
                ]
            ),
        )

    def test_private_names_on_request(self):
        text = outline("m.py", SOURCE, include_private=True)
        self.assertIn("\n  def _cache(self)  [L29-30]\n", text)
        self.assertIn("\n  class _Inner  [L32-34]\n    def hidden(self)  [L33-34]\n", text)
        self.assertTrue(text.startswith("m.py: 42 lines, 2 classes, 4 functions, 4 methods\n"))

    def test_syntax_error_names_the_line(self):
        with self.assertRaises(OutlineError) as raised:
            outline("bad.py", b"x = 1\ndef f(:\n    pass\n")
        self.assertRegex(str(raised.exception), r"^syntax error in bad\.py at line 2, column \d+: ")

    def test_bytes_with_an_encoding_declaration(self):
        source = "# -*- coding: latin-1 -*-\ndef caf\xe9(): pass\n".encode("latin-1")
        self.assertIn("def caf\xe9()  [L2]", outline("l.py", source))

    def test_empty_module(self):
        self.assertTrue(outline("e.py", b"").endswith("(no classes or functions)"))

    def test_is_private(self):
        self.assertTrue(is_private("_x"))
        self.assertTrue(is_private("__mangled"))
        self.assertFalse(is_private("__init__"))
        self.assertFalse(is_private("public"))


if __name__ == "__main__":
    unittest.main()
