# A validator for the subset of JSON Schema (draft 2020-12) that schemas/cli_reports.schema.json
# uses: type, properties, required, items, enum, additionalProperties, anyOf and local $ref.
# Debian's python3 has no jsonschema module; a keyword outside this subset is an error, so the
# schema cannot silently rely on something nothing checks.

KNOWN = {"$schema", "$id", "$defs", "$ref", "title", "description", "type", "properties",
         "required", "items", "enum", "additionalProperties", "anyOf"}

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def resolve(root, ref):
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref are supported: {ref}")
    node = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def errors(root, schema, value, where="$"):
    """Every way `value` breaks `schema`, as 'path: problem' strings (empty when it conforms)."""
    unknown = set(schema) - KNOWN
    if unknown:
        raise ValueError(f"schema keywords outside the supported subset: {sorted(unknown)}")
    if "$ref" in schema:
        return errors(root, resolve(root, schema["$ref"]), value, where)
    found = []
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(TYPES[t](value) for t in types):
            return [f"{where}: {type(value).__name__} {value!r:.60} is not {'|'.join(types)}"]
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{where}: {value!r:.60} is not one of {schema['enum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                found.append(f"{where}: missing required field '{key}'")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                found += errors(root, props[key], item, f"{where}.{key}")
            elif extra is False:
                found.append(f"{where}: unknown field '{key}'")
            elif isinstance(extra, dict):
                found += errors(root, extra, item, f"{where}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            found += errors(root, schema["items"], item, f"{where}[{i}]")
    if "anyOf" in schema:
        branches = [errors(root, s, value, where) for s in schema["anyOf"]]
        if all(branches):
            best = min(branches, key=len)
            found.append(f"{where}: matches no anyOf branch; the closest fails: {'; '.join(best)}")
    return found


def validate(root, definition, value):
    """Errors of `value` against root['$defs'][definition]."""
    return errors(root, {"$ref": f"#/$defs/{definition}"}, value)
