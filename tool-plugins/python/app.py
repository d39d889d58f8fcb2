"""The `python_outline` tool plugin: exports `agent:core/tool` and reads files only through the
imported `agent:core/execution-environment`."""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import execution_environment, types

from outline import OutlineError, outline

TOOL_NAME = "python_outline"

PARAMETERS = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "Path of a .py (or .pyi) file, relative to the workspace.",
        },
        "include_private": {
            "type": "boolean",
            "description": "Also list _private names (default false; dunder methods are always listed).",
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}

DESCRIPTION = (
    "Outline a Python file without reading it whole: classes, functions and methods (async "
    "marked) with signatures, decorators, line ranges and docstring first lines, indented by "
    "nesting. Use it to find where things are before reading a range of the file."
)

_FS_ERROR_KINDS = {
    types.FsError_NotFound: "not found",
    types.FsError_PermissionDenied: "permission denied",
    types.FsError_IsDirectory: "is a directory",
    types.FsError_NotADirectory: "not a directory",
    types.FsError_Binary: "binary file",
    types.FsError_TooLarge: "too large",
    types.FsError_AlreadyExists: "already exists",
    types.FsError_Denied: "denied",
    types.FsError_InvalidInput: "invalid input",
    types.FsError_Other: "error",
}


def _fs_error_message(error):
    """The host's message (it names the path) prefixed with the error kind."""
    kind = _FS_ERROR_KINDS.get(type(error), "error")
    message = getattr(error, "value", None) or str(error)
    return f"{kind}: {message}"


def _run(arguments_json):
    try:
        arguments = json.loads(arguments_json) if arguments_json.strip() else {}
    except json.JSONDecodeError as error:
        raise Err(f"arguments are not valid JSON: {error}")
    if not isinstance(arguments, dict):
        raise Err("arguments must be a JSON object")
    unknown = sorted(set(arguments) - set(PARAMETERS["properties"]))
    if unknown:
        raise Err(f"unknown argument(s): {', '.join(unknown)}")
    path = arguments.get("path")
    if not isinstance(path, str) or not path.strip():
        raise Err("`path` is required and must be a non-empty string")
    include_private = arguments.get("include_private", False)
    if not isinstance(include_private, bool):
        raise Err("`include_private` must be a boolean")
    if not path.endswith((".py", ".pyi")):
        raise Err(f"not a Python file (expected a .py or .pyi path): {path}")

    try:
        source = execution_environment.read_file(path, None)
    except Err as error:
        raise Err(_fs_error_message(error.value))

    try:
        return outline(path, bytes(source), include_private)
    except OutlineError as error:
        raise Err(str(error))


class Tool(exports.Tool):
    def definitions(self):
        return [
            types.ToolDefinition(
                name=TOOL_NAME,
                description=DESCRIPTION,
                parameters_json=json.dumps(PARAMETERS),
            )
        ]

    def execute(self, name, arguments_json):
        if name != TOOL_NAME:
            raise Err(f"unknown tool {name!r}; this plugin provides {TOOL_NAME}")
        try:
            return _run(arguments_json)
        except Err:
            raise
        except Exception as error:  # never trap the component on a bug: report it
            raise Err(f"internal error in {TOOL_NAME}: {type(error).__name__}: {error}")
