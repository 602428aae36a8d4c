"""Schemathesis hooks for scripts/contract-test.sh.

1. Generation. The location-map request schema states its rules between fields (width x scale,
   one marker colour per ticker, the focus-map options) as `if`/`then` conditions under `allOf`.
   Schemathesis 4.32 validates against such schemas but cannot build a data generator from them
   (its canonicaliser gives up on that many conditions). So, for generation only, these hooks
   hand it each request-body schema without those conditions, and drop every case generated as
   valid whose body breaks the full published schema: the server is never sent a "valid" body
   that the contract calls invalid. Negative cases need no filter: a body that breaks the
   reduced schema breaks the full one too.

2. Rules JSON Schema cannot state. A few requests match the schema and are still refused with
   400 INVALID_REQUEST, as the documentation says: `bounds` with south not below north or with
   west and east on one meridian, a `city`
   the gazetteer does not know for a radius search, a focus map of a country (or US state) the
   map has no shape for, a usage window that is reversed or longer than 366 days, a change-feed
   `radius_km` without `city` (query parameters cannot state a rule between two of them), a
   change-feed `since` older than the history the server keeps or after both the serving
   snapshot and the clock, a history without brand or ticker, with both, with `from` after
   `to` or either outside the history's reach, an `open_at` on a day past its month's end
   (2026-02-30), two overlap names of one company, an overlap of more than 100,000 pairs, and a
   focus map of a country other than the one `country` (or the `state`) filters to. Those 400s
   are not failures of "valid data should be accepted"; every other 400 on valid data still is.
"""

import copy
import json
import re

import jsonschema_rs
import schemathesis

COMPONENT_PREFIX = "#/components/schemas/"

# (METHOD, path) -> a validator of the full request-body schema.
FULL_BODY = {}

# What the server says when it refuses a schema-valid request for one of the documented reasons
# above: the `details` of a failing field (zod rules), or the whole message (checks in the addon).
DOCUMENTED_DETAILS = {
    ("bounds", "south must be below north"),
    ("bounds", "west and east must be different meridians (-180 to 180 for the whole world)"),
    ("from", "from must not be after to"),
    ("radius_km", "radius_km requires city"),
    ("brands", "two of the names are one company"),
    ("tickers", "two of the names are one company"),
    ("since", "is in the future"),
    ("brand", "brand or ticker is required"),
    ("ticker", "give brand or ticker, not both"),
    ("from", "is after to"),
    ("open_at", "is not a day of its month"),
}
DOCUMENTED_DETAIL_PATTERNS = [
    ("from", re.compile(r"^the window is at most \d+ days$")),
    ("since", re.compile(r"^the history begins at \S+$")),
    ("from", re.compile(r"^the history begins at \S+ \(period \S+\)$")),
    ("from", re.compile(r"^period \S+ is after to's period \S+$")),
    ("from", re.compile(r"^the history ends at \S+ \(period \S+\)$")),
    ("to", re.compile(r"^the history ends at \S+ \(period \S+\)$")),
    ("to", re.compile(r"^the history begins at \S+ \(period \S+\)$")),
    ("city", re.compile(r"^unknown city '.*': it is not in the gazetteer and no row carries it$", re.S)),
    ("focus_country", re.compile(r"^a focus map of [A-Z]{2} draws only the stores there, and country [A-Z]{2} leaves none: give the same country, or one of them$")),
]
DOCUMENTED_MESSAGES = [
    re.compile(r"^unknown city '.*': it is not in the gazetteer and no row carries it$", re.S),
    re.compile(r'^no shape for country ".*"$', re.S),
    re.compile(r"^invalid filter: more than \d+ pairs: narrow the request with a country or a shorter distance_m$", re.S),
    re.compile(r"^invalid focus map: (conus applies to the US only|regions are available for US states only|unknown US state .*)$", re.S),
]


def _is_conditional(part):
    return isinstance(part, dict) and "if" in part


@schemathesis.hook
def before_load_schema(context, raw_schema):
    components = raw_schema.get("components", {}).get("schemas", {})
    original = copy.deepcopy(components)
    reduced = set()
    for name, schema in components.items():
        parts = schema.get("allOf")
        if isinstance(parts, list) and any(_is_conditional(p) for p in parts):
            kept = [p for p in parts if not _is_conditional(p)]
            if kept:
                schema["allOf"] = kept
            else:
                del schema["allOf"]
            reduced.add(name)
    for path, item in raw_schema.get("paths", {}).items():
        for method, operation in item.items():
            if not isinstance(operation, dict):
                continue
            media = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            ref = media.get("schema", {}).get("$ref", "")
            if ref.startswith(COMPONENT_PREFIX) and ref[len(COMPONENT_PREFIX):] in reduced:
                # The full schema, with every component beside it so its own references resolve.
                root = {"$ref": ref, "components": {"schemas": original}}
                FULL_BODY[(method.upper(), path)] = jsonschema_rs.Draft202012Validator(root)


@schemathesis.hook
def filter_case(context, case):
    validator = FULL_BODY.get((case.operation.method.upper(), case.operation.path))
    if validator is None or case.meta is None or not case.meta.generation.mode.is_positive:
        return True
    return validator.is_valid(case.body)


def _documented_refusal(response):
    if response.status_code != 400:
        return False
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    if not isinstance(body, dict) or body.get("code") != "INVALID_REQUEST":
        return False
    details = body.get("details")
    if isinstance(details, list) and details:
        return all(
            (d.get("field"), d.get("message")) in DOCUMENTED_DETAILS
            or any(d.get("field") == f and p.match(str(d.get("message"))) for f, p in DOCUMENTED_DETAIL_PATTERNS)
            for d in details
            if isinstance(d, dict)
        )
    return any(p.match(str(body.get("error", ""))) for p in DOCUMENTED_MESSAGES)


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keeps every failure but a 400 refusal, for a documented reason, of a schema-valid request."""
    return not (failure.code == "ST202" and _documented_refusal(response))
