"""``--schemas http://registry:8081``: the schemas asked of a running registry, by id, read-only.

Only GETs of Confluent Schema Registry's REST API, each answer kept for the run (memory bounded by
the schemas used, not the records):

* ``GET /schemas/types`` once, first: the URL answers as a registry (else exit 2, one line);
* ``GET /schemas/ids/{id}`` (``schema``, ``schemaType``, ``references``) and
  ``GET /schemas/ids/{id}/versions`` (its subjects and versions: the first is reported) for a
  payload's id; in a context other than the default, ``?subject=:.ctx:`` as the serializers ask;
* ``GET /subjects/{subject}/versions/{version}`` for a reference, and ``.../versions/latest`` for
  the typed columns' subject.

Each request has a timeout (:data:`TIMEOUT`, seconds); an answer larger than :data:`MAX_ANSWER`
is refused.  An id the registry does not know (404) decodes as an unknown id; a request that fails
(refused, timed out, HTTP 5xx) is the reason of the records that needed it, said once per id.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import Any
from urllib.parse import quote

from kseg.decoders.registry.store import DEFAULT_CONTEXT, Reference, SchemaEntry, split_subject

TIMEOUT = 10.0
MAX_ANSWER = 16 << 20
ACCEPT = "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json"


class RegistryUnreachable(Exception):
    """The registry did not answer as one (the message is the one line to print)."""


def is_registry_url(source: str) -> bool:
    from urllib.parse import urlsplit

    return urlsplit(source).scheme in ("http", "https")


class RemoteStore:
    """The lookups of :class:`~kseg.decoders.registry.store.SchemaStore`, answered by GETs, cached."""

    def __init__(self, url: str, timeout: float = TIMEOUT) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.schemas: dict[tuple[str, int], SchemaEntry] = {}  # what was fetched, by subject-version
        self._ids: dict[tuple[str, int], SchemaEntry | None | LookupError] = {}
        self.skipped: Counter[str] = Counter()
        self.records = 0

    def probe(self) -> None:
        """``GET /schemas/types``: RegistryUnreachable with the reason when the URL is no registry."""
        try:
            answer = self._get("/schemas/types")
        except LookupError as exc:
            raise RegistryUnreachable(str(exc)) from None
        if not isinstance(answer, list):
            raise RegistryUnreachable(f"{self.url}/schemas/types: not a schema registry's answer")

    def _get(self, path: str) -> Any:
        """The JSON answer of ``GET path``; None for 404; LookupError with the reason otherwise."""
        import urllib.error
        import urllib.request

        request = urllib.request.Request(self.url + path, headers={"Accept": ACCEPT})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:  # noqa: S310 - http(s) only
                data = answer.read(MAX_ANSWER + 1)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise LookupError(f"GET {self.url}{path}: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise LookupError(f"GET {self.url}{path}: {reason}") from None
        if len(data) > MAX_ANSWER:
            raise LookupError(f"GET {self.url}{path}: an answer of more than {MAX_ANSWER} bytes")
        try:
            return json.loads(data)
        except ValueError:
            raise LookupError(f"GET {self.url}{path}: the answer is not JSON") from None

    # -- the store's lookups ------------------------------------------------------------------------
    def by_id(self, schema_id: int, context: str = DEFAULT_CONTEXT) -> SchemaEntry | None:
        key = (context, schema_id)
        if key not in self._ids:
            try:
                self._ids[key] = self._fetch_id(schema_id, context)
            except LookupError as exc:
                self._ids[key] = exc
        found = self._ids[key]
        if isinstance(found, LookupError):
            raise found
        return found

    def _fetch_id(self, schema_id: int, context: str) -> SchemaEntry | None:
        where = "" if context == DEFAULT_CONTEXT else "?subject=" + quote(f":{context}:", safe="")
        doc = self._get(f"/schemas/ids/{schema_id}{where}")
        if not isinstance(doc, dict) or not isinstance(doc.get("schema"), str):
            return None
        holders = self._get(f"/schemas/ids/{schema_id}/versions{where}") or []
        first = holders[0] if isinstance(holders, list) and holders and isinstance(holders[0], dict) else {}
        subject, version = first.get("subject"), first.get("version")
        entry = _entry(doc, subject if isinstance(subject, str) else "", version if isinstance(version, int) else 0)
        entry = replace(entry, id=schema_id)
        if entry.subject:
            self.schemas.setdefault((entry.subject, entry.version), entry)
        return entry

    def by_guid(self, guid: bytes, context: str = DEFAULT_CONTEXT) -> SchemaEntry | None:
        return None  # the REST API's GUID lookup is not asked (docs/schemas.md)

    def contexts_holding(self, schema_id: int) -> list[str]:
        return []

    def reference(self, ref: Reference, parent_subject: str) -> SchemaEntry | None:
        context, _ = split_subject(ref.subject)
        subject = ref.subject
        if context == DEFAULT_CONTEXT and split_subject(parent_subject)[0] != DEFAULT_CONTEXT:
            subject = f":{split_subject(parent_subject)[0]}:{ref.subject}"
        return self._version(subject, str(ref.version))

    def latest(self, subject: str) -> SchemaEntry | None:
        return self._version(subject, "latest")

    def _version(self, subject: str, version: str) -> SchemaEntry | None:
        doc = self._get(f"/subjects/{quote(subject, safe='')}/versions/{version}")
        if not isinstance(doc, dict) or not isinstance(doc.get("schema"), str) or not isinstance(doc.get("id"), int):
            return None
        number = doc.get("version")
        entry = _entry(doc, subject, number if isinstance(number, int) else 0)
        self.schemas.setdefault((entry.subject, entry.version), entry)
        return entry

    def __len__(self) -> int:
        return len(self.schemas)


def _entry(doc: dict, subject: str, version: int) -> SchemaEntry:
    refs = tuple(
        Reference(str(r.get("name") or ""), r["subject"], r["version"])
        for r in doc.get("references") or ()
        if isinstance(r, dict) and isinstance(r.get("subject"), str) and isinstance(r.get("version"), int)
    )
    found = doc.get("id")
    sid = found if isinstance(found, int) else -1
    schema_type = str(doc.get("schemaType") or "AVRO")
    return SchemaEntry(subject, version, sid, schema_type, doc["schema"], refs, False, None, False)
