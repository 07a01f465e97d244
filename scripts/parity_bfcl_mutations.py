"""Model outputs for the BFCL parity run: the correct answer to each BFCL record and seeded mutations.

Families: the correct answer; wrong/invented tools, parameters and values at the top level; types and
enums inside arrays and nested objects, explicit nulls for optional parameters (NESTED_MUTATIONS); a
stray call that does not run — rejected by the schema, malformed, invented, missing a required
parameter — right before or after a correct call (EXTRA_MUTATIONS); and on records without ground truth,
calls that should not be there.

An output is `Output(calls, content)`: `calls` is a list of `(name, arguments)`, `arguments` a dict or,
for malformed JSON, the raw argument text (a str). Every mutation is a function
`(record, rng) -> Output | None`; `None` means it does not apply to that record (the applicability rules
are stated per mutation below, and tests/parity_bfcl.rs re-implements them to count the expected rows).
`rng` is `random.Random` seeded with `"<seed>|<record id>|<mutation>"`, so the outputs are the same on
every machine and run.

The **correct answer** of a record with ground truth: each expected call in order, each parameter given
its first acceptable value that is neither `""` nor `null`; a parameter with no such value is omitted
when `""` is acceptable (else given `null`); a ground-truth parameter that the function doc does not
define is omitted when `""` is acceptable (BFCL rejects any parameter outside the doc). A `dict`-typed
value's per-key acceptable lists (and those of each dict in a list of dicts) are resolved the same way.
"""

import copy
import json
from dataclasses import dataclass, field

AST_CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple")
IRRELEVANCE = ("irrelevance", "live_irrelevance")
RELEVANCE = ("live_relevance",)


@dataclass
class Record:
    id: str
    category: str
    file: str
    line: int
    entry: dict  # the question line as BFCL reads it (`function` is the candidate set)
    ground_truth: list = None  # possible_answer's `ground_truth`, or None

    @property
    def functions(self):
        return self.entry.get("function", [])

    def doc(self, name):
        return next((f for f in self.functions if f.get("name") == name), None)


@dataclass
class Output:
    calls: list = field(default_factory=list)  # [(name, dict | raw str)]
    content: str = "Done."


def _first(values):
    """First acceptable value that is neither "" nor null; (found, value)."""
    for v in values:
        if v != "" and v is not None:
            return True, v
    return False, None


def _resolve(acceptable):
    """(include, value) for a list of acceptable values, per the module's rule."""
    found, v = _first(acceptable)
    if found:
        return True, v
    if "" in acceptable:
        return False, None
    return True, None


def _concrete(value, schema):
    """Resolve a dict's per-key acceptable lists (one level, as BFCL's dict_checker reads them)."""
    t = (schema or {}).get("type")
    if t == "dict" and isinstance(value, dict):
        out = {}
        for k, lst in value.items():
            inc, v = _resolve(lst) if isinstance(lst, list) else (True, lst)
            if inc:
                out[k] = v
        return out
    if t in ("array", "tuple") and isinstance(value, list) and (schema.get("items") or {}).get("type") == "dict":
        return [_concrete(v, schema["items"]) for v in value]
    return value


def correct_calls(rec):
    calls = []
    for gt in rec.ground_truth:
        (name, args), = gt.items()
        props = ((rec.doc(name) or {}).get("parameters") or {}).get("properties", {})
        out = {}
        for p, acceptable in args.items():
            if p not in props and "" in acceptable:
                continue
            inc, v = _resolve(acceptable)
            if inc:
                out[p] = _concrete(v, props.get(p))
        calls.append((name, out))
    return calls


def props_of(rec, name):
    return ((rec.doc(name) or {}).get("parameters") or {}).get("properties", {})


def required_of(rec, name):
    return ((rec.doc(name) or {}).get("parameters") or {}).get("required", [])


def placeholder(schema):
    """A plausible value of a BFCL-typed schema (for calls on records without ground truth)."""
    schema = schema or {}
    if schema.get("enum"):
        return schema["enum"][0]
    t = schema.get("type")
    if t == "integer":
        return 1
    if t == "float":
        return 1.5
    if t == "boolean":
        return True
    if t in ("array", "tuple"):
        return [placeholder(schema["items"])] if schema.get("items") else []
    if t == "dict":
        props = schema.get("properties", {})
        return {r: placeholder(props.get(r)) for r in schema.get("required", []) if r in props}
    return "example"


def placeholder_call(rec, fn):
    props = fn.get("parameters", {}).get("properties", {})
    return fn["name"], {r: placeholder(props.get(r)) for r in fn.get("parameters", {}).get("required", []) if r in props}


def malformed(args):
    """Argument text cut short: `{"a": 1` (never valid JSON)."""
    return json.dumps(args)[:-1]


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


# --- candidate sites: (call index, parameter) pairs a mutation may touch ---------------------------


def sites(rec, calls, pred):
    """Every (call index, param) of the correct answer whose (value, schema, acceptable) satisfies pred."""
    out = []
    for i, (name, args) in enumerate(calls):
        props = props_of(rec, name)
        (_, gt_args), = rec.ground_truth[i].items()
        for p, v in args.items():
            if pred(v, props.get(p) or {}, gt_args.get(p, [])):
                out.append((i, p))
    return out


def _edit(rec, rng, pred, change):
    calls = correct_calls(rec)
    found = sites(rec, calls, pred)
    if not found:
        return None
    i, p = rng.choice(found)
    name, args = calls[i]
    args = copy.deepcopy(args)
    change(args, p, props_of(rec, name).get(p) or {}, rng)
    calls[i] = (name, args)
    return Output(calls)


def _set(f):
    def change(args, p, schema, rng):
        args[p] = f(args[p], schema, rng)
    return change


def _has_letter(v):
    return isinstance(v, str) and any(c.isascii() and c.isalpha() for c in v)


def _strings_with_quote(v):
    vs = v if isinstance(v, list) else [v]
    return any(isinstance(s, str) and ("'" in s or '"' in s) for s in vs)


def _swap_quotes(v, schema, rng):
    def swap(s):
        if not isinstance(s, str):
            return s
        return s.replace("'", "\0").replace('"', "'").replace("\0", '"')
    return [swap(s) for s in v] if isinstance(v, list) else swap(v)


def _retype(v, schema, rng):
    if isinstance(v, bool):
        return "true" if v else "false"
    if is_int(v) or isinstance(v, float):
        return str(v)
    if isinstance(v, str):
        return [v]
    return json.dumps(v)  # a list or dict sent as its JSON text


def _wrong_value(v, schema, rng):
    if isinstance(v, bool):
        return not v
    if is_int(v):
        return v + 1
    if isinstance(v, float):
        return v + 1.5
    if isinstance(v, str):
        return v + " zzz"
    return v + v[-1:] if v else [placeholder(schema.get("items"))]  # a list: one element more


def _integral_floats_in_array(v, schema, acc):
    return (schema.get("type") in ("array", "tuple") and (schema.get("items") or {}).get("type") == "float"
            and isinstance(v, list) and any(isinstance(x, float) and x.is_integer() for x in v))


def _renamed(p):
    parts = p.split("_")
    camel = parts[0] + "".join(w[:1].upper() + w[1:] for w in parts[1:])
    return camel if camel != p else p + "_value"


def m_correct(rec, rng):
    if rec.category in IRRELEVANCE:
        return Output([], "None of the available functions can do this.")
    if rec.category in RELEVANCE:
        return Output([placeholder_call(rec, rec.functions[0])]) if rec.functions else None
    return Output(correct_calls(rec))


def m_wrong_tool(rec, rng):
    """Applies when the record offers at least two distinct function names."""
    names = sorted({f["name"] for f in rec.functions})
    if len(names) < 2:
        return None
    calls = correct_calls(rec)
    i = rng.randrange(len(calls))
    calls[i] = (rng.choice([n for n in names if n != calls[i][0]]), calls[i][1])
    return Output(calls)


def m_invented_tool(rec, rng):
    calls = correct_calls(rec)
    i = rng.randrange(len(calls))
    calls[i] = (calls[i][0] + "_api", calls[i][1])
    return Output(calls)


def m_extra_param_doc(rec, rng):
    """A parameter the function doc defines but the ground truth leaves out (BFCL: must not be passed)."""
    calls = correct_calls(rec)
    found = []
    for i, (name, args) in enumerate(calls):
        (_, gt_args), = rec.ground_truth[i].items()
        found += [(i, p) for p in props_of(rec, name) if p not in gt_args]
    if not found:
        return None
    i, p = rng.choice(found)
    calls[i][1][p] = placeholder(props_of(rec, calls[i][0])[p])
    return Output(calls)


def m_extra_param_unknown(rec, rng):
    calls = correct_calls(rec)
    i = rng.randrange(len(calls))
    calls[i][1]["extra_option"] = True
    return Output(calls)


def m_missing_required(rec, rng):
    def drop(args, p, schema, rng):
        del args[p]
    calls = correct_calls(rec)
    req = {i: required_of(rec, n) for i, (n, _) in enumerate(calls)}
    found = [(i, p) for i, (_, a) in enumerate(calls) for p in a if p in req[i]]
    if not found:
        return None
    i, p = rng.choice(found)
    drop(calls[i][1], p, None, rng)
    return Output(calls)


def m_omit_optional(rec, rng):
    """A parameter the doc does not require and whose acceptable values lack "" (BFCL: missing_optional)."""
    calls = correct_calls(rec)
    req = {i: required_of(rec, n) for i, (n, _) in enumerate(calls)}
    found = []
    for i, (_, a) in enumerate(calls):
        (_, gt_args), = rec.ground_truth[i].items()
        found += [(i, p) for p in a if p not in req[i] and "" not in gt_args.get(p, [])]
    if not found:
        return None
    i, p = rng.choice(found)
    del calls[i][1][p]
    return Output(calls)


def m_renamed_param(rec, rng):
    def rename(args, p, schema, rng):
        args[_renamed(p)] = args.pop(p)
    return _edit(rec, rng, lambda v, s, a: True, rename)


M = {
    "correct": m_correct,
    "wrong_tool": m_wrong_tool,
    "invented_tool": m_invented_tool,
    "extra_param_doc": m_extra_param_doc,
    "extra_param_unknown": m_extra_param_unknown,
    "missing_required": m_missing_required,
    "omit_optional": m_omit_optional,
    "renamed_param": m_renamed_param,
    "wrong_type": lambda r, g: _edit(r, g, lambda v, s, a: v is not None, _set(_retype)),
    "wrong_value": lambda r, g: _edit(r, g, lambda v, s, a: v is not None and not isinstance(v, dict), _set(_wrong_value)),
    "int_for_float": lambda r, g: _edit(
        r, g, lambda v, s, a: s.get("type") == "float" and isinstance(v, float) and v.is_integer(), _set(lambda v, s, g: int(v))),
    "float_for_int_literal": lambda r, g: _edit(
        r, g, lambda v, s, a: s.get("type") == "float" and is_int(v), _set(lambda v, s, g: float(v))),
    "float_for_int": lambda r, g: _edit(
        r, g, lambda v, s, a: s.get("type") == "integer" and is_int(v), _set(lambda v, s, g: float(v))),
    "int_for_float_in_array": lambda r, g: _edit(
        r, g, _integral_floats_in_array,
        _set(lambda v, s, g: [int(x) if isinstance(x, float) and x.is_integer() else x for x in v])),
    "string_case": lambda r, g: _edit(
        r, g, lambda v, s, a: _has_letter(v), _set(lambda v, s, g: v.swapcase() if g.random() < 0.5 else v.upper())),
    "string_punct": lambda r, g: _edit(
        r, g, lambda v, s, a: isinstance(v, str) and v != "",
        _set(lambda v, s, g: v.replace(" ", g.choice(["_", "-", "  "])) if " " in v else v + g.choice([".", ",", "*"]))),
    "string_quote": lambda r, g: _edit(r, g, lambda v, s, a: _strings_with_quote(v), _set(_swap_quotes)),
    "reordered_list": lambda r, g: _edit(
        r, g, lambda v, s, a: isinstance(v, list) and len(v) >= 2 and any(x != v[0] for x in v), _set(lambda v, s, g: v[::-1])),
}


def m_extra_call(rec, rng):
    calls = correct_calls(rec)
    calls.append(copy.deepcopy(rng.choice(calls)))
    return Output(calls)


def m_fewer_calls(rec, rng):
    calls = correct_calls(rec)
    if len(calls) < 2:
        return None
    del calls[rng.randrange(len(calls))]
    return Output(calls)


def m_no_call(rec, rng):
    return Output([], "I cannot do that with these functions.")


def m_swapped_order(rec, rng):
    calls = correct_calls(rec)
    return Output(calls[::-1]) if len(calls) >= 2 else None


def m_malformed_json(rec, rng):
    calls = correct_calls(rec)
    i = rng.randrange(len(calls))
    calls[i] = (calls[i][0], malformed(calls[i][1]))
    return Output(calls)


M.update({
    "extra_call": m_extra_call,
    "fewer_calls": m_fewer_calls,
    "no_call": m_no_call,
    "swapped_order": m_swapped_order,
    "malformed_json": m_malformed_json,
})


# --- extra calls that do not run, before or after the correct one ---------------------------------
#
# The stray call is derived from one expected call of the correct answer (chosen by the rng among the
# calls the status applies to) and put right before it or right after it; the correct calls all stay.

SCALARS = ("integer", "float", "string", "boolean")


def _typed(schema):
    """Does the schema declare a type a validator checks (not BFCL's `any`)?"""
    return (schema or {}).get("type") not in (None, "any")


def _stray(rec, rng, where, status):
    """The correct calls plus one stray call of `status`, derived from calls[i] (the rng picks i among
    the calls the status applies to), right before or right after it."""
    candidates, make = EXTRA_STATUSES[status]
    calls = correct_calls(rec)
    options = [i for i, (name, args) in enumerate(calls) if candidates(rec, name, args)]
    if not options:
        return None
    i = rng.choice(options)
    name, args = calls[i]
    stray = make(rec, name, args, candidates(rec, name, args), rng)
    calls.insert(i if where == "before" else i + 1, stray)
    return Output(calls)


def _retype_one(rec, name, args, params, rng):
    p = rng.choice(params)
    return name, {**copy.deepcopy(args), p: _retype(args[p], props_of(rec, name)[p], rng)}


def _drop_one(rec, name, args, params, rng):
    p = rng.choice(params)
    return name, {k: copy.deepcopy(v) for k, v in args.items() if k != p}


# status -> (the parameters of a correct call it can work on (a call with none is not a candidate;
# [True] = any call), how the stray call is made from the correct call).
EXTRA_STATUSES = {
    # one typed argument sent with the wrong type: the schema rejects the call
    "rejected": (lambda rec, name, args: [p for p, v in args.items() if v is not None and _typed(props_of(rec, name).get(p))],
                 _retype_one),
    # the arguments cut short: not JSON
    "malformed": (lambda rec, name, args: [True], lambda rec, name, args, _, rng: (name, malformed(args))),
    # a name no offered function has
    "invented": (lambda rec, name, args: [True], lambda rec, name, args, _, rng: (name + "_api", copy.deepcopy(args))),
    # one required parameter the correct call gives left out
    "missing_required": (lambda rec, name, args: [p for p in args if p in required_of(rec, name)], _drop_one),
}
EXTRA_MUTATIONS = [f"extra_{status}_{where}" for status in EXTRA_STATUSES for where in ("before", "after")]
for _status in EXTRA_STATUSES:
    for _where in ("before", "after"):
        M[f"extra_{_status}_{_where}"] = (lambda st, wh: lambda rec, rng: _stray(rec, rng, wh, st))(_status, _where)


# --- types and enums inside arrays and nested objects, explicit null for optional parameters -------


def _retype_scalar(x):
    """Another JSON type for a scalar: a number or bool as its text, a string as a number."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if is_int(x) or isinstance(x, float):
        return str(x)
    if isinstance(x, str):
        return int(x) if x.isdigit() else len(x)
    return str(x)


def _items(schema):
    return (schema.get("items") or {}) if schema.get("type") in ("array", "tuple") else {}


def _change_item(pred, change):
    """Change one item (chosen by the rng among those `pred(item, item_schema)` accepts) of an array."""
    def site(v, s, a):
        return s.get("type") in ("array", "tuple") and isinstance(v, list) and any(pred(x, _items(s)) for x in v)

    def edit(args, p, schema, rng):
        v = copy.deepcopy(args[p])
        j = rng.choice([j for j, x in enumerate(v) if pred(x, _items(schema))])
        v[j] = change(v[j], rng)
        args[p] = v
    return site, edit


def _change_key(pred, change):
    """Change one key's value (chosen by the rng among those `pred(value, key_schema)` accepts) of a dict."""
    def key_schemas(s):
        return (s.get("properties") or {}) if s.get("type") == "dict" else {}

    def site(v, s, a):
        return s.get("type") == "dict" and isinstance(v, dict) and any(pred(x, key_schemas(s).get(k) or {}) for k, x in v.items())

    def edit(args, p, schema, rng):
        v = copy.deepcopy(args[p])
        k = rng.choice([k for k, x in v.items() if pred(x, key_schemas(schema).get(k) or {})])
        v[k] = change(v[k], rng)
        args[p] = v
    return site, edit


def _scalar_of_declared_type(x, item_schema):
    return x is not None and item_schema.get("type") in SCALARS


def _int_declared_integer(x, item_schema):
    return is_int(x) and item_schema.get("type") == "integer"


def _int_not_declared_float(x, key_schema):
    """An int under a key declared `integer`, or not declared at all (a dict's undeclared keys)."""
    return is_int(x) and key_schema.get("type") in ("integer", None)


def _letters_under_enum(x, item_schema):
    return "enum" in item_schema and _has_letter(x)


def _case_changed(x, rng):
    changed = x.swapcase() if rng.random() < 0.5 else x.upper()
    return changed if changed != x else x.swapcase()


def m_null_optional(rec, rng):
    """An explicit null for a parameter the doc does not require and the ground truth names (whether the
    correct answer gives it or leaves it out)."""
    calls = correct_calls(rec)
    found = []
    for i, (name, _) in enumerate(calls):
        (_, gt_args), = rec.ground_truth[i].items()
        props, req = props_of(rec, name), required_of(rec, name)
        found += [(i, p) for p in gt_args if p in props and p not in req]
    if not found:
        return None
    i, p = rng.choice(found)
    calls[i][1][p] = None
    return Output(calls)


def _nested(finder):
    site, edit = finder
    return lambda rec, rng: _edit(rec, rng, site, edit)


M.update({
    "array_item_retyped": _nested(_change_item(_scalar_of_declared_type, lambda x, g: _retype_scalar(x))),
    "array_item_float_for_int": _nested(_change_item(_int_declared_integer, lambda x, g: float(x))),
    "array_item_enum_case": _nested(_change_item(_letters_under_enum, _case_changed)),
    "dict_value_retyped": _nested(_change_key(_scalar_of_declared_type, lambda x, g: _retype_scalar(x))),
    "dict_value_float_for_int": _nested(_change_key(_int_not_declared_float, lambda x, g: float(x))),
    "null_optional": m_null_optional,
})
NESTED_MUTATIONS = ["array_item_retyped", "array_item_float_for_int", "array_item_enum_case", "dict_value_retyped",
                    "dict_value_float_for_int", "null_optional"]


# --- records without ground truth ------------------------------------------------------------------


def m_abstain_call(rec, rng):
    """irrelevance: a plausible call (required parameters filled by type) to one of the record's functions."""
    return Output([placeholder_call(rec, rng.choice(rec.functions))]) if rec.functions else None


def m_abstain_malformed(rec, rng):
    if not rec.functions:
        return None
    name, args = placeholder_call(rec, rng.choice(rec.functions))
    return Output([(name, malformed(args))])


def m_abstain_invented(rec, rng):
    if not rec.functions:
        return None
    name, args = placeholder_call(rec, rng.choice(rec.functions))
    return Output([(name + "_api", args)])


def m_relevance_malformed(rec, rng):
    return m_abstain_malformed(rec, rng)


def m_relevance_invented(rec, rng):
    return m_abstain_invented(rec, rng)


M.update({
    "irrelevance_call": m_abstain_call,
    "irrelevance_malformed": m_abstain_malformed,
    "irrelevance_invented": m_abstain_invented,
    "relevance_malformed": m_relevance_malformed,
    "relevance_invented": m_relevance_invented,
})

# Which mutations are tried on which kind of record, in the order rows are written.
AST_MUTATIONS = [
    "correct", "wrong_tool", "invented_tool", "extra_param_doc", "extra_param_unknown", "missing_required",
    "omit_optional", "renamed_param", "wrong_type", "wrong_value", "int_for_float", "float_for_int_literal",
    "float_for_int", "int_for_float_in_array", "string_case", "string_punct", "string_quote", "reordered_list",
    "extra_call", "fewer_calls", "no_call", "swapped_order", "malformed_json",
] + NESTED_MUTATIONS + EXTRA_MUTATIONS
IRRELEVANCE_MUTATIONS = ["correct", "irrelevance_call", "irrelevance_malformed", "irrelevance_invented"]
RELEVANCE_MUTATIONS = ["correct", "no_call", "relevance_malformed", "relevance_invented"]
ALL_MUTATIONS = list(dict.fromkeys(AST_MUTATIONS + IRRELEVANCE_MUTATIONS + RELEVANCE_MUTATIONS))


def mutations_for(rec):
    if rec.category in IRRELEVANCE:
        return IRRELEVANCE_MUTATIONS
    if rec.category in RELEVANCE:
        return RELEVANCE_MUTATIONS
    return AST_MUTATIONS
