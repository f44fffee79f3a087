"""Schema files: a :class:`~privpub.Schema` as JSON or YAML (by the file's
suffix; JSON otherwise), the document of :meth:`Schema.to_dict`.

YAML is read with every scalar as text, then typed by field: ``lo``/``hi``
integers, ``ordered`` a boolean, values and ``missing`` of the kind the
attribute's dtype names (text when it names none), so ``[no, yes]`` stay the
strings 'no' and 'yes' (not YAML 1.1 booleans) and ``02134`` keeps its zero.
A schema file is how a CSV keeps its declared order and missing labels.

This module reads and writes documents; :meth:`Schema.read` and
:meth:`Schema.write` turn them into schemas (it never imports the schema, which
imports it).
"""

from __future__ import annotations

import json
import os
from typing import Any

import pandas as pd

from privpub.core.errors import SchemaError
from privpub.core.files import write_text
from privpub.core.optional import require

YAML_SUFFIXES = (".yaml", ".yml")


def _is_yaml(path: str | os.PathLike) -> bool:
    return os.fspath(path).lower().endswith(YAML_SUFFIXES)


def read_document(path: str | os.PathLike) -> dict:
    """The schema document in ``path``, typed; a SchemaError names the file and
    what is wrong (unreadable, not JSON/YAML, not a mapping, a mistyped field)."""
    shown = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SchemaError(f"schema file {shown!r}: {reason}") from None
    if _is_yaml(path):
        yaml = require("yaml", f"the YAML schema file {shown!r}")
        try:
            document = yaml.load(text, Loader=yaml.BaseLoader)  # scalars stay text
        except yaml.YAMLError as exc:
            raise SchemaError(f"schema file {shown!r} is not YAML: "
                              f"{str(exc).splitlines()[0]}") from None
        if isinstance(document, dict) and isinstance(document.get("attributes"), list):
            document = {**document, "attributes": [_typed_yaml_attribute(shown, a)
                                                   for a in document["attributes"]]}
    else:
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"schema file {shown!r} is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise SchemaError(f"schema file {shown!r} must hold a mapping with 'attributes', got "
                          f"{type(document).__name__}")
    return document


def write_document(document: dict, path: str | os.PathLike, *, overwrite: bool = False) -> None:
    """``document`` written to ``path`` as YAML or JSON (by its suffix), whole or
    not at all; an existing file is refused unless ``overwrite``."""
    if _is_yaml(path):
        yaml = require("yaml", f"the YAML schema file {os.fspath(path)!r}")
        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    else:
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    write_text(path, text, overwrite=overwrite, suffix=(".json", *YAML_SUFFIXES))


def _typed_yaml_attribute(path: str, attribute: Any) -> Any:
    """One YAML attribute (all text) with its numbers and flags typed by field:
    lo/hi integers, ordered a boolean, values and missing of the kind its
    dtype names (text when it names none)."""
    if not isinstance(attribute, dict):
        return attribute  # Schema.from_dict names it
    name = attribute.get("name", "?")

    def typed(field: str, text: Any, kind: str) -> Any:
        if not isinstance(text, str):
            return text
        try:
            if kind == "integer":
                return int(text)
            if kind == "float":
                return float(text)
            if kind == "boolean":
                return {"true": True, "false": False}[text.lower()]
        except (ValueError, KeyError):
            raise SchemaError(f"schema file {path!r}: attribute {name!r}: {field} {text!r} is "
                              f"not a {kind}") from None
        return text

    dtype = attribute.get("dtype")
    kind = "string"
    if isinstance(dtype, str) and dtype != "category":
        try:
            numpy_kind = pd.api.types.pandas_dtype(dtype)
        except TypeError:
            numpy_kind = None  # Schema.from_dict names the bad dtype
        if numpy_kind is not None:
            kind = ("boolean" if pd.api.types.is_bool_dtype(numpy_kind) else
                    "integer" if pd.api.types.is_integer_dtype(numpy_kind) else
                    "float" if pd.api.types.is_float_dtype(numpy_kind) else "string")
    out = dict(attribute)
    if attribute.get("type") == "int_range":
        kind = "integer"
        for field in ("lo", "hi"):
            if field in out:
                out[field] = typed(field, out[field], "integer")
    elif isinstance(out.get("values"), list):
        out["values"] = [typed("value", v, kind) for v in out["values"]]
    if "missing" in out:
        out["missing"] = typed("missing", out["missing"], kind)
    if "ordered" in out:
        out["ordered"] = typed("ordered", out["ordered"], "boolean")
    return out
