#!/usr/bin/env python3
"""Lists what a WebAssembly component (or core module) shows without running it: its custom
sections, including those of its nested modules and components (where a linker puts the ones
written in the source), and the names of its top-level imports and exports.

    scripts/wasm-sections.py target/components/text-stats.wasm
    scripts/wasm-sections.py --require-custom agent-tool-wit FILE...   # exit 1 if absent

Reads the binary format directly, so it needs nothing but Python 3.
"""

import argparse
import sys

KINDS = {1: "func", 2: "value", 3: "type", 4: "component", 5: "instance"}


class Reader:
    def __init__(self, data, pos=0):
        self.data = data
        self.pos = pos

    def byte(self):
        if self.pos >= len(self.data):
            raise ValueError("unexpected end of data")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def leb(self):
        result = shift = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return result

    def string(self):
        size = self.leb()
        text = self.data[self.pos : self.pos + size]
        self.pos += size
        return text.decode("utf-8", errors="replace")

    def extern_name(self):
        # 0x00 and the older 0x01 lead a plain name; 0x02 adds options (implements,
        # version suffix, external id), each a tag byte and a string.
        lead = self.byte()
        name = self.string()
        if lead == 0x02:
            for _ in range(self.leb()):
                self.byte()
                self.string()
        elif lead not in (0x00, 0x01):
            raise ValueError(f"unknown name lead byte {lead:#x}")
        return name

    def kind(self):
        first = self.byte()
        if first == 0x00:
            self.byte()
            return "core module"
        return KINDS.get(first, f"kind {first:#x}")

    def type_ref(self):
        kind = self.kind()
        if kind == "value":
            # A primitive value type is one byte at 0x64 or above; else an s33 type index.
            if self.data[self.pos] >= 0x64:
                self.byte()
            else:
                self.leb()
        elif kind == "type":
            if self.byte() == 0x00:
                self.leb()
        else:
            self.leb()
        return kind


def walk(data, where, report, top):
    if data[:4] != b"\0asm":
        raise ValueError(f"{where}: not a WebAssembly binary")
    component = data[6:8] == b"\x01\x00"
    reader = Reader(data, 8)
    modules = components = 0
    while reader.pos < len(data):
        section = reader.byte()
        size = reader.leb()
        start = reader.pos
        body = data[start : start + size]
        reader.pos = start + size
        if section == 0:
            inner = Reader(body)
            name = inner.string()
            report.append(("custom", name, f"{size - inner.pos} bytes, in {where}"))
        elif component and section == 1:
            walk(body, f"{where} > module {modules}", report, False)
            modules += 1
        elif component and section == 4:
            walk(body, f"{where} > component {components}", report, False)
            components += 1
        elif component and top and section in (10, 11):
            inner = Reader(body)
            for _ in range(inner.leb()):
                name = inner.extern_name()
                if section == 10:
                    report.append(("import", name, inner.type_ref()))
                else:
                    kind = inner.kind()
                    inner.leb()
                    if inner.byte() == 0x01:
                        inner.type_ref()
                    report.append(("export", name, kind))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument(
        "--require-custom",
        action="append",
        default=[],
        metavar="NAME",
        help="fail unless each file has a custom section of this name (repeatable)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only failures")
    args = parser.parse_args()
    failed = False
    for path in args.files:
        with open(path, "rb") as f:
            data = f.read()
        report = []
        try:
            walk(data, "component" if data[6:8] == b"\x01\x00" else "module", report, True)
        except (ValueError, IndexError) as error:
            print(f"{path}: cannot be read: {error}", file=sys.stderr)
            failed = True
            continue
        if not args.quiet:
            print(f"{path}:")
            for what, name, detail in report:
                print(f"  {what:6} {name}  ({detail})")
        customs = {name for what, name, _ in report if what == "custom"}
        for required in args.require_custom:
            if required not in customs:
                print(f"{path}: no custom section named {required}", file=sys.stderr)
                failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
