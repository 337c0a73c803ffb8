"""The gateway's OpenAPI document, bundled: one file, every schema under ``components/schemas``.

``docs/openapi.source.yaml`` is written by hand and refers to the topics' JSON Schemas by file
(``schemas/ledger.schema.json#/$defs/RagToolResult``), which a person reads well and client generators
cannot follow (openapi-generator stops at the first ``$defs`` of a referenced file; openapi-python-client
drops the operations with remote references). :func:`bundle` replaces every such reference with a
component made from the models (:func:`models.schemas.topic_schema`): each topic's value as
``<Topic>Value`` and each of its ``$defs`` under its own name (prefixed with the topic's when two
topics define one name differently); a schema that allows only null is written ``const: null``,
and an integer says ``format: int64``. ``evidence-chain schemas --openapi docs/openapi.yaml`` writes the
result, and ``--check`` fails when the committed file is not what it would write. A development
command: it needs PyYAML (the ``dev`` extra).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from models.schemas import schema_file, topic_schema
from models.vocab import Topic
from streams.errors import ConfigurationError

try:
    import yaml
except ModuleNotFoundError as exc:  # a plain install: the bundler is a development command
    raise ConfigurationError(
        "bundling the OpenAPI document needs PyYAML, which is not installed: "
        "pip install 'evidence-chain[dev]'"
    ) from exc

SOURCE_SUFFIX = ".source.yaml"
REF_PREFIX = "schemas/"
COMPONENTS = "#/components/schemas/"
HEADER = (
    "# GENERATED from {source} (beside this file) and the models (models/schemas.py): edit the source,\n"
    "# then run `make openapi`. One file, every schema under components/schemas, no external $ref, so\n"
    "# client generators can read it (make clients-check).\n"
)


def source_of(out: Path) -> Path:
    """``docs/openapi.yaml`` -> ``docs/openapi.source.yaml``."""
    return out.with_name(out.name.removesuffix(".yaml") + SOURCE_SUFFIX)


def _camel(topic: Topic) -> str:
    return "".join(part.capitalize() for part in topic.value.split("-"))


def value_component(topic: Topic) -> str:
    """The component a topic's value becomes: ``raw-hits`` -> ``RawHitsValue``."""
    return f"{_camel(topic)}Value"


def _walk(node: Any, visit: Callable[[dict[str, Any]], None]) -> None:
    if isinstance(node, dict):
        visit(node)
        for value in node.values():
            _walk(value, visit)
    elif isinstance(node, list):
        for value in node:
            _walk(value, visit)


class _Bundler:
    def __init__(self, components: dict[str, Any]) -> None:
        self.components = components
        self.names: dict[Topic, dict[str, str]] = {}
        """By topic: each ``$defs`` name -> its component name."""

    def topic_of(self, file: str) -> Topic:
        for topic in Topic:
            if schema_file(topic) == file:
                return topic
        raise ValueError(f"$ref to {REF_PREFIX}{file}: no topic has that schema file")

    def add_topic(self, topic: Topic) -> dict[str, str]:
        if topic in self.names:
            return self.names[topic]
        schema = topic_schema(topic)
        defs: dict[str, Any] = schema.pop("$defs", {})
        for key in ("$schema", "$id"):
            schema.pop(key, None)
        names: dict[str, str] = {}
        for name, definition in defs.items():
            taken = self.components.get(name)
            names[name] = name if taken is None or taken == definition else f"{_camel(topic)}{name}"
        self.names[topic] = names

        def local(node: dict[str, Any]) -> None:
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                node["$ref"] = COMPONENTS + names[ref.removeprefix("#/$defs/")]

        for name, definition in defs.items():
            _walk(definition, local)
            if self.components.get(names[name], definition) != definition:
                raise ValueError(f"component {names[name]} is defined twice, differently")
            self.components[names[name]] = definition
        _walk(schema, local)
        self.components[value_component(topic)] = schema
        return names

    def rewrite(self, node: dict[str, Any]) -> None:
        ref = node.get("$ref")
        if not isinstance(ref, str) or not ref.startswith(REF_PREFIX):
            return
        file, _, pointer = ref.removeprefix(REF_PREFIX).partition("#")
        topic = self.topic_of(file)
        names = self.add_topic(topic)
        if not pointer:
            node["$ref"] = COMPONENTS + value_component(topic)
        elif pointer.startswith("/$defs/") and pointer.removeprefix("/$defs/") in names:
            node["$ref"] = COMPONENTS + names[pointer.removeprefix("/$defs/")]
        else:
            raise ValueError(f"$ref {ref}: only a whole topic schema or one of its $defs can be bundled")


def _null_as_const(node: Any, in_union: bool = False) -> None:
    """``{"type": "null"}`` standing alone as ``{"const": null}``: the same values, and a form client
    generators read (openapi-generator 7 makes a Java class named ``Null`` of the first, which does
    not compile). Inside ``anyOf``/``oneOf`` it is left alone: there it is the usual "or null"."""
    if isinstance(node, dict):
        if node.get("type") == "null" and not in_union:
            del node["type"]
            node["const"] = None
        for key, value in node.items():
            _null_as_const(value, key in ("anyOf", "oneOf"))
    elif isinstance(node, list):
        for value in node:
            _null_as_const(value, in_union)


def _integers_as_int64(node: Any) -> None:
    """Every ``type: integer`` without a ``format`` says ``format: int64`` (OpenAPI's word for what JSON
    integers here are: offsets and millisecond timestamps overflow the 32-bit integer a generator
    picks otherwise). ``format`` is an annotation: the values allowed do not change."""
    if isinstance(node, dict):
        if node.get("type") == "integer" and "format" not in node:
            node["format"] = "int64"
        for value in node.values():
            _integers_as_int64(value)
    elif isinstance(node, list):
        for value in node:
            _integers_as_int64(value)


def bundle(source: dict[str, Any]) -> dict[str, Any]:
    """The document with every ``schemas/<topic>.schema.json[#/$defs/Name]`` reference made a component.

    Raises:
        ValueError: a reference to a file no topic has, to a pointer other than ``#/$defs/Name``, or a
            component name the source already uses for another schema.
    """
    document = copy.deepcopy(source)
    components = document.setdefault("components", {}).setdefault("schemas", {})
    bundler = _Bundler(components)
    _walk(document.get("paths", {}), bundler.rewrite)
    for name in list(components):
        _walk(components[name], bundler.rewrite)
    _null_as_const(components)
    _integers_as_int64(components)
    document["components"]["schemas"] = dict(sorted(components.items()))
    return document


class _Dumper(yaml.SafeDumper):  # type: ignore[misc] # PyYAML ships no types
    """Block style for multi-line strings, so the descriptions stay readable."""


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _string)


def render(document: dict[str, Any], source: str) -> bytes:
    """The bundled document as its file's bytes: the header, then YAML in the source's key order."""
    body: str = yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110)
    return (HEADER.format(source=source) + body).encode("utf-8")


def bundled_file(out: Path) -> bytes:
    """What ``out`` must hold: its source (``*.source.yaml`` beside it) bundled and rendered.

    Raises:
        OSError: the source cannot be read.
        ValueError: the source is not YAML of an object, or cannot be bundled (:func:`bundle`).
    """
    source = source_of(out)
    loaded = yaml.safe_load(source.read_text(encoding="utf-8"))
    if not isinstance(loaded, dict):
        raise ValueError(f"{source} is not an OpenAPI document (a YAML mapping)")  # noqa: TRY004 - content
    return render(bundle(loaded), source.name)
