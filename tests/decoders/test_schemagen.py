"""The maintainer tool that turns Kafka's JSON specs into kseg's schema files."""

from __future__ import annotations

import json

from kseg.decoders._schemagen import convert, render, strip_comments

SPEC = """
// comment before
{
  "type": "data",
  "name": "DemoValue",
  // Version 1 is flexible.
  "validVersions": "0-1",
  "flexibleVersions": "1+",
  "fields": [
    { "name": "Url", "type": "string", "versions": "0+", "about": "http://x // not a comment" },
    { "name": "Epoch", "type": "int32", "versions": "0+", "default": -1 },
    { "name": "Flag", "type": "bool", "versions": "0+", "default": true },
    { "name": "Extra", "type": "Sub", "taggedVersions": "1+", "tag": 0, "default": null,
      "nullableVersions": "1+", "fields": [
        { "name": "X", "type": "int8", "versions": "1+" }
    ]}
  ]
}
"""


def test_convert_normalises_like_kafkas_generator() -> None:
    schema = convert(json.loads(strip_comments(SPEC)))
    assert schema["fields"][0] == {"name": "url", "type": "string", "versions": "0+"}
    assert schema["fields"][1]["default"] == "-1"
    assert schema["fields"][2]["default"] == "true"
    extra = schema["fields"][3]
    assert extra["versions"] == "1+"  # from taggedVersions
    assert "default" not in extra  # JSON null is the empty default, not "null"
    assert extra["fields"] == [{"name": "x", "type": "int8", "versions": "1+"}]
    assert json.loads(render(schema)) == schema
