#!/usr/bin/env python3
"""Parity of toolpick's scores with BFCL's own checker, on the shared BFCL v4 slice.

Run it through scripts/parity-bfcl.sh (which makes the venv); by hand:
    <venv>/bin/python scripts/parity_bfcl.py --toolpick target/debug/toolpick --out DIR [--bfcl DIR] [--seed N]

For every record of the slice it generates the correct answer and seeded mutations
(scripts/parity_bfcl_mutations.py), scores each output with BFCL's checker and with toolpick, writes
DIR/parity.csv, prints the verdict disagreements grouped by cause and the agreement of error categories,
and exits 1 if any disagreement is not one of toolpick's documented deliberate differences, a record is
lost without a reason, or an imported task no longer carries its record's system message.

How BFCL's checker is loaded (bfcl-eval==2026.3.23, installed with --no-deps): `ast_checker.py` imports
`bfcl_eval.constants.model_config` only to read `MODEL_CONFIG_MAPPING[model].underscore_to_dot`, and that
module imports every model SDK. We put a stub module in `sys.modules` first whose mapping has one entry,
our pseudo-model `toolpick-parity`, with `underscore_to_dot=False` (the outputs use BFCL's original dotted
names, as a model does that may send dots), then import `ast_checker` itself. The runner functions that
wrap it — `_evaluate_single_ast_entry` and `_evaluate_single_relevance_entry` (eval_runner.py), the
FC-mode `decode_ast` of `OpenAICompletionsHandler` (openai_completion.py), and `is_empty_output` /
`is_function_calling_format_output` (utils.py) — live in modules that import SDKs too, so their source is
read from the installed files with `ast` and executed alone: BFCL's own code runs, not a re-implementation.
An output reaches BFCL in the form that handler produces: a list of `{name: "<argument JSON text>"}` when
the model called, its message text when it did not. Nothing here touches the network.
"""

import argparse
import ast
import csv
import io
import json
import os
import random
import subprocess
import sys
import types
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import parity_bfcl_mutations as mut  # noqa: E402

MODEL = "toolpick-parity"


def load_bfcl():
    """BFCL's checker and runner functions, without the SDKs (see the module docstring)."""
    @dataclass
    class _Config:
        underscore_to_dot: bool = False

    stub = types.ModuleType("bfcl_eval.constants.model_config")
    stub.MODEL_CONFIG_MAPPING = {MODEL: _Config()}
    sys.modules["bfcl_eval.constants.model_config"] = stub
    try:
        from bfcl_eval.constants.enums import Language, ReturnFormat
        from bfcl_eval.eval_checker.ast_eval import ast_checker as checker
    except ImportError as e:
        sys.exit(f"cannot import BFCL's checker ({e}); run scripts/parity-bfcl.sh, which installs bfcl-eval in a venv")
    root = Path(checker.__file__).resolve().parents[2]

    def extract(rel, names, namespace, cls=None):
        tree = ast.parse((root / rel).read_text(encoding="utf-8"))
        body = tree.body
        if cls:
            body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body
        found = [n for n in body if isinstance(n, ast.FunctionDef) and n.name in names]
        if {n.name for n in found} != set(names):
            sys.exit(f"{rel}: expected functions {names} not found; is bfcl-eval the pinned version?")
        exec(compile(ast.Module(body=found, type_ignores=[]), str(root / rel), "exec"), namespace)

    # `BaseHandler` only annotates a parameter there.
    ns = {"json": json, "Language": Language, "ReturnFormat": ReturnFormat, "ast_checker": checker.ast_checker, "BaseHandler": object}
    extract("utils.py", ["is_function_calling_format_output", "is_empty_output"], ns)
    extract("eval_checker/eval_runner.py", ["_evaluate_single_ast_entry", "_evaluate_single_relevance_entry"], ns)
    handler_ns = {"json": json}
    extract("model_handler/api_inference/openai_completion.py", ["decode_ast"], handler_ns, cls="OpenAICompletionsHandler")
    handler = types.SimpleNamespace(is_fc_model=True)
    handler.decode_ast = types.MethodType(handler_ns["decode_ast"], handler)
    ns["handler"] = handler
    ns["simple_function_checker"] = checker.simple_function_checker
    ns["checker_module"] = checker
    return types.SimpleNamespace(**ns)


def shared_bfcl():
    if os.environ.get("TOOLPICK_SHARED_DIR"):
        return Path(os.environ["TOOLPICK_SHARED_DIR"]) / "external" / "bfcl"
    here = Path(__file__).resolve().parents[1]
    for a in here.parents:
        if (a / "shared" / "external").is_dir():
            return a / "shared" / "external" / "bfcl"
    sys.exit(f"../shared/external not found above {here}; pass --bfcl DIR or set TOOLPICK_SHARED_DIR")


def load_records(bfcl):
    """Every question line of BFCL_v4_*.json, in file and line order, with its ground truth."""
    files = sorted(p for p in bfcl.glob("BFCL_v4_*.json") if p.is_file())
    if not files:
        sys.exit(f"{bfcl}: no BFCL_v4_*.json question files")
    records = []
    for f in files:
        category = f.stem[len("BFCL_v4_"):]
        answers = {}
        pa = bfcl / "possible_answer" / f.name
        if pa.exists():
            for ln, line in enumerate(pa.read_text(encoding="utf-8").splitlines(), 1):
                if line.strip():
                    a = json.loads(line)
                    answers[a["id"]] = a["ground_truth"]
        for ln, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            entry = json.loads(line)
            rec = mut.Record(entry["id"], category, f.name, ln, entry, answers.get(entry["id"]))
            if category in mut.AST_CATEGORIES and rec.ground_truth is None:
                sys.exit(f"{f}:{ln}: record `{rec.id}` has no ground truth in {pa}")
            records.append(rec)
    return records


def generate(records, seed):
    rows = []
    for rec in records:
        for m in mut.mutations_for(rec):
            out = mut.M[m](rec, random.Random(f"{seed}|{rec.id}|{m}"))
            if out is not None:
                rows.append({"rec": rec, "mutation": m, "output": out})
    return rows


def decodes(arguments):
    if isinstance(arguments, dict):
        return True
    try:
        return isinstance(json.loads(arguments), dict)
    except ValueError:
        return False


def bfcl_result(output):
    """The model result as BFCL's OpenAI FC handler records it."""
    if not output.calls:
        return output.content
    return [{name: a if isinstance(a, str) else json.dumps(a)} for name, a in output.calls]


def bfcl_score(B, rec, output):
    result = bfcl_result(output)
    if rec.category in mut.IRRELEVANCE or rec.category in mut.RELEVANCE:
        e = B._evaluate_single_relevance_entry(B.handler, rec.id, result, rec.entry, MODEL, rec.category)
    else:
        e = B._evaluate_single_ast_entry(B.handler, rec.id, result, rec.ground_truth, rec.entry, MODEL, rec.category,
                                         language=B.Language.PYTHON, return_format=B.ReturnFormat.PYTHON,
                                         has_tool_call_tag=False)
    return bool(e["valid"]), e.get("error_type", ""), e.get("error", [])


def bfcl_category(rec, output, error_type, error, B=None):
    """BFCL's error_type in toolpick's taxonomy (for the secondary table)."""
    offered = {f["name"] for f in rec.functions}
    names = [n for n, _ in output.calls]
    if not error_type:
        return ""
    # More calls than expected: BFCL's wrong_count, or a decoder failure when a stray call is malformed;
    # toolpick names the attempt left over (`extra_call`).
    if rec.ground_truth is not None and len(output.calls) > len(rec.ground_truth) \
            and (error_type.endswith(":wrong_count") or error_type.startswith("ast_decoder:")):
        return "extra_call"
    if error_type.startswith("ast_decoder:") or error_type == "relevance_error:decoder_failed":
        return "malformed_call" if output.calls else "should_have_called"
    if error_type == "irrelevance_error:decoder_success":
        return "invented_tool" if any(n not in offered for n in names) else "should_have_abstained"
    if error_type.endswith(":wrong_count"):
        return "wrong_count"
    if error_type.endswith(":wrong_func_name"):
        return "invented_tool" if any(n not in offered for n in names) else "wrong_tool"
    if error_type.endswith(":missing_required"):
        return "missing_required"
    if error_type.endswith(":unexpected_param"):
        return "unexpected_param"
    if error_type.endswith(":missing_optional"):
        return "value_error"
    if error_type.startswith("type_error"):
        return "type_error"
    if error_type.startswith(("value_error", "dict_checker", "list_dict_checker")):
        return "value_error"
    if error_type.endswith(":cannot_find_match") and B is not None:
        # BFCL reports the call its greedy pass failed on. Name instead, as toolpick does, the pair left
        # over by a maximum matching under BFCL's own pairwise checker: the expected call and the last
        # left-over output to the same function (else the first left-over output).
        ok, owner = pairwise_matching(B, rec, output)
        e = next(i for i in range(len(rec.ground_truth)) if i not in owner.values())
        left = [a for a in range(len(output.calls)) if owner.get(a) is None]
        fname = list(rec.ground_truth[e])[0]
        pick = ([a for a in left if output.calls[a][0] == fname] or left[:1] or [None])[-1]
        if pick is None:
            return "wrong_count"
        name, args = output.calls[pick]
        sub = B.simple_function_checker(B.checker_module.find_description(rec.functions, fname), {name: args},
                                        rec.ground_truth[e], B.Language.PYTHON, MODEL)["error_type"]
        return bfcl_category(rec, mut.Output([(name, args)]), sub, [], B)
    return "other:" + error_type


# --- toolpick ----------------------------------------------------------------------------------------


def run(cmd, what):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"{what} failed (exit {p.returncode}): {' '.join(map(str, cmd))}\n{p.stderr}{p.stdout}")
    return p


def toolpick_import(toolpick, bfcl, work):
    """The tasks toolpick imports (by id), and the importer's reasons for every record it skipped."""
    out = work / "import"
    run([toolpick, "import", "bfcl", str(bfcl), "-o", str(out)], "toolpick import")
    tasks = {}
    for line in (out / "bfcl.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            t = json.loads(line)
            tasks[t["id"]] = t
    reasons = defaultdict(list)
    with open(out / "defects.csv", newline="", encoding="utf-8") as f:
        for d in csv.DictReader(f):
            if d.get("action") == "skipped" and d.get("id"):
                reasons[d["id"]].append(d["reason"])
    return tasks, reasons


def system_messages(rec):
    """The text of every `system` message of the record's question."""
    return [m.get("content", "") for turn in rec.entry.get("question", []) for m in turn
            if isinstance(m, dict) and m.get("role") == "system"]


def strings_in(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for x in value:
            yield from strings_in(x)
    elif isinstance(value, dict):
        for x in value.values():
            yield from strings_in(x)


def system_prompts_kept(records, tasks):
    """Per imported record with a system message: is every system text somewhere in the imported task
    (whatever field carries it)? A replay cannot see whether the model was shown it; this checks that the
    task still has it to show. {record id: kept?}"""
    out = {}
    for rec in records:
        texts = system_messages(rec)
        if texts and rec.id in tasks:
            held = list(strings_in(tasks[rec.id]))
            out[rec.id] = all(any(t in s for s in held) for t in texts)
    return out


def toolpick_score(toolpick, bfcl, rows, imported, work):
    """Write one replay file per mutation, run toolpick once over all of them, read the verdicts."""
    replay = work / "replay"
    replay.mkdir(parents=True)
    lines = defaultdict(list)
    for r in rows:
        if r["rec"].id in imported:
            o = r["output"]
            calls = [{"name": n, "arguments": a} for n, a in o.calls]
            lines[r["mutation"]].append(json.dumps({"id": r["rec"].id, "calls": calls, "content": o.content}))
    backends = []
    for m in mut.ALL_MUTATIONS:
        if lines[m]:
            (replay / f"{m}.jsonl").write_text("\n".join(lines[m]) + "\n", encoding="utf-8")
            backends.append(f"replay:{replay / m}.jsonl")
    run([toolpick, "run", "--dataset", f"bfcl:{bfcl}", "--backends", ",".join(backends), "--layouts", "flat",
         "--variants", "good", "--out", str(work / "runs"), "--run-id", "parity", "--no-cache", "-q"], "toolpick run")
    verdicts = {}
    with open(work / "runs" / "parity" / "trials.jsonl", encoding="utf-8") as f:
        for line in f:
            t = json.loads(line)
            m = t["backend"].removeprefix("replay:")
            verdicts[(t["task_id"], m)] = (bool(t["score"]["pass"]), t["score"].get("error_type") or "")
    return verdicts


# --- causes of disagreement (rules on the outputs and both checkers' answers, never on record ids) ---


def widened(rec, output):
    """The output with ints inside float-typed arrays written as floats (what toolpick accepts)."""
    calls = []
    for name, args in output.calls:
        if isinstance(args, dict):
            props = mut.props_of(rec, name)
            args = {p: [float(x) if mut.is_int(x) else x for x in v]
                    if isinstance(v, list) and (props.get(p) or {}).get("type") in ("array", "tuple")
                    and ((props.get(p) or {}).get("items") or {}).get("type") == "float" else v
                    for p, v in args.items()}
        calls.append((name, args))
    return mut.Output(calls, output.content)


def pairwise_matching(B, rec, output):
    """A maximum matching of expected calls to output calls under BFCL's own pairwise checker
    (augmenting paths): (every expected call matched?, {output index: expected index})."""
    decoded = [{n: a} for n, a in output.calls if isinstance(a, dict)]
    if len(decoded) != len(output.calls):
        return False, {}
    ok = [[B.simple_function_checker(B.checker_module.find_description(rec.functions, list(gt)[0]), out, gt,
                                     B.Language.PYTHON, MODEL)["valid"] for out in decoded] for gt in rec.ground_truth]
    owner = {}

    def augment(e, seen):
        for a in range(len(decoded)):
            if ok[e][a] and a not in seen:
                seen.add(a)
                if owner.get(a) is None or augment(owner[a], seen):
                    owner[a] = e
                    return True
        return False

    matched = [augment(e, set()) for e in range(len(rec.ground_truth))]
    return all(matched), owner


def perfect_matching_exists(B, rec, output):
    """Under BFCL's own pairwise checker, can every expected call get a distinct output call?"""
    return len(output.calls) == len(rec.ground_truth) and pairwise_matching(B, rec, output)[0]


def _breaks(value, schema):
    """Does `value` break a declared `enum` or `format: date` in `schema`, at any depth (array items,
    dict properties)? BFCL's checker reads neither."""
    import datetime
    schema = schema or {}
    if "enum" in schema and value not in schema["enum"]:
        return True
    if schema.get("format") == "date" and isinstance(value, str):
        try:
            datetime.date.fromisoformat(value) if len(value) == 10 else datetime.date.fromisoformat("x")
        except ValueError:
            return True
    if isinstance(value, list) and schema.get("type") in ("array", "tuple"):
        return any(_breaks(x, schema.get("items")) for x in value)
    if isinstance(value, dict) and schema.get("type") == "dict":
        props = schema.get("properties") or {}
        return any(_breaks(x, props.get(k)) for k, x in value.items())
    return False


def outside_schema(rec, output):
    """Does an argument break its parameter's declared `enum` or `format: date`, at any depth?"""
    return any(_breaks(v, mut.props_of(rec, name).get(p)) for name, args in output.calls if isinstance(args, dict)
               for p, v in args.items())


def _whole_float_for_nested_int(value, schema):
    """A whole-number float inside `value` where `schema` declares an `integer` array item or dict property."""
    schema = schema or {}
    if isinstance(value, list) and schema.get("type") in ("array", "tuple"):
        items = schema.get("items") or {}
        return any((items.get("type") == "integer" and isinstance(x, float) and x.is_integer())
                   or _whole_float_for_nested_int(x, items) for x in value)
    if isinstance(value, dict) and schema.get("type") == "dict":
        props = schema.get("properties") or {}
        return any(((props.get(k) or {}).get("type") == "integer" and isinstance(x, float) and x.is_integer())
                   or _whole_float_for_nested_int(x, props.get(k)) for k, x in value.items())
    return False


def nested_float_for_int(rec, output):
    return any(_whole_float_for_nested_int(v, mut.props_of(rec, name).get(p)) for name, args in output.calls
               if isinstance(args, dict) for p, v in args.items())


DELIBERATE = {
    "widening": "int→float widening inside arrays (BFCL widens only top-level values)",
    "matching": "optimal matching of parallel calls (BFCL pairs greedily, first fit)",
    "malformed": "an attempted malformed call is not an abstention (BFCL ignores undecodable output)",
    "schema": "a value outside the parameter's declared enum or format is rejected (BFCL's checker reads neither)",
    "integer": "a whole-number float is no integer inside arrays and objects either (BFCL compares those by Python ==)",
    "invented": "on a relevance task, a call to a name no offered tool has calls nothing (BFCL passes any decodable call)",
}


def cause(B, row):
    rec, o = row["rec"], row["output"]
    b_pass, t_pass, t_err = row["bfcl_pass"], row["toolpick_pass"], row["toolpick_error_type"]
    malformed = any(not decodes(a) for _, a in o.calls)
    if not b_pass and t_pass and row["bfcl_error_type"].startswith("type_error") and bfcl_score(B, rec, widened(rec, o))[0]:
        return "widening"
    if not b_pass and t_pass and row["bfcl_error_type"].endswith(":cannot_find_match") and perfect_matching_exists(B, rec, o):
        return "matching"
    if rec.category in mut.IRRELEVANCE and b_pass and not t_pass and malformed and t_err == "malformed_call":
        return "malformed"
    if rec.category in mut.RELEVANCE and not b_pass and t_pass and malformed:
        return "malformed"
    if b_pass and not t_pass and t_err == "value_error" and outside_schema(rec, o):
        return "schema"
    if b_pass and not t_pass and t_err == "type_error" and nested_float_for_int(rec, o):
        return "integer"
    offered = {f["name"] for f in rec.functions}
    if rec.category in mut.RELEVANCE and b_pass and not t_pass and t_err == "invented_tool" \
            and o.calls and all(name not in offered for name, _ in o.calls):
        return "invented"
    return "unclassified"


# --- output ------------------------------------------------------------------------------------------


def verdict(p):
    return "pass" if p else "fail"


def table(headers, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    line = lambda r: "| " + " | ".join(str(x).ljust(w) for x, w in zip(r, widths)) + " |"
    return "\n".join([line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in rows])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--toolpick", required=True, help="the toolpick binary")
    ap.add_argument("--out", required=True, type=Path, help="output directory (parity.csv and toolpick's run)")
    ap.add_argument("--bfcl", type=Path, help="BFCL slice (default ../shared/external/bfcl)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    bfcl = (args.bfcl or shared_bfcl()).resolve()
    B = load_bfcl()
    records = load_records(bfcl)
    rows = generate(records, args.seed)
    work = args.out / "toolpick"
    if work.exists():
        import shutil
        shutil.rmtree(work)
    work.mkdir(parents=True)
    tasks, reasons = toolpick_import(args.toolpick, bfcl, work)
    imported = set(tasks)
    verdicts = toolpick_score(args.toolpick, bfcl, rows, imported, work)

    for r in rows:
        rec = r["rec"]
        r["bfcl_pass"], r["bfcl_error_type"], err = bfcl_score(B, rec, r["output"])
        r["bfcl_category"] = bfcl_category(rec, r["output"], r["bfcl_error_type"], err, B)
        if rec.id not in imported:
            r["toolpick_pass"], r["toolpick_error_type"] = None, ""
            r["cause"] = "not imported: " + ("; ".join(reasons[rec.id]) or "NO REASON GIVEN (lost silently)")
            continue
        r["toolpick_pass"], r["toolpick_error_type"] = verdicts[(rec.id, r["mutation"])]
        r["cause"] = "" if r["toolpick_pass"] == r["bfcl_pass"] else cause(B, r)

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["record", "category", "mutation", "bfcl_verdict", "bfcl_error_type", "bfcl_error_category",
                "toolpick_verdict", "toolpick_error_type", "agree", "cause"])
    for r in rows:
        imp = r["toolpick_pass"] is not None
        w.writerow([r["rec"].id, r["rec"].category, r["mutation"], verdict(r["bfcl_pass"]), r["bfcl_error_type"],
                    r["bfcl_category"], verdict(r["toolpick_pass"]) if imp else "not_imported", r["toolpick_error_type"],
                    ("yes" if r["toolpick_pass"] == r["bfcl_pass"] else "no") if imp else "", r["cause"]])
    tmp = args.out / "parity.csv.tmp"
    tmp.write_text(buf.getvalue(), encoding="utf-8")
    tmp.replace(args.out / "parity.csv")
    return report(rows, records, imported, reasons, system_prompts_kept(records, tasks))


def report(rows, records, imported, reasons, system_kept):
    scored = [r for r in rows if r["toolpick_pass"] is not None]
    per = defaultdict(Counter)
    for r in rows:
        c = per[r["mutation"]]
        c["rows"] += 1
        if r["toolpick_pass"] is None:
            c["not imported"] += 1
        else:
            c["agree" if r["toolpick_pass"] == r["bfcl_pass"] else "disagree"] += 1
            c["bfcl pass"] += r["bfcl_pass"]
            c["toolpick pass"] += r["toolpick_pass"]
    print(f"BFCL parity: {len(records)} records, {len(records) - len(imported & {x.id for x in records})} not imported, "
          f"{len(rows)} outputs ({len(scored)} scored by both)\n")
    for rec in records:
        for m in mut.mutations_for(rec):
            per[m]["tried on"] += 1
    # rows = outputs generated: a mutation is skipped on a record it does not apply to.
    heads = ["mutation", "tried on", "rows", "not imported", "bfcl pass", "toolpick pass", "agree", "disagree"]
    order = [m for m in mut.ALL_MUTATIONS if m in per]
    body = [[m] + [per[m][h] for h in heads[1:]] for m in order]
    body.append(["total"] + [sum(per[m][h] for m in order) for h in heads[1:]])
    print(table(heads, body))

    dis = [r for r in scored if r["toolpick_pass"] != r["bfcl_pass"]]
    by_cause = Counter(r["cause"] for r in dis)
    print("\nDisagreements by cause:")
    print(table(["cause", "count", "mutations"], [
        [DELIBERATE.get(c, c), n, ", ".join(sorted({r["mutation"] for r in dis if r["cause"] == c}))]
        for c, n in sorted(by_cause.items())] or [["(none)", 0, ""]]))

    skipped = sorted({r["rec"].id for r in rows if r["toolpick_pass"] is None}, key=lambda i: [x.id for x in records].index(i))
    print(f"\nNot imported by toolpick ({len(skipped)} record{'' if len(skipped) == 1 else 's'}; not disagreements):")
    for i in skipped:
        print(f"  {i}: {'; '.join(reasons[i]) or 'NO REASON GIVEN (lost silently)'}")

    both_fail = [r for r in scored if not r["toolpick_pass"] and not r["bfcl_pass"]]
    cat = defaultdict(Counter)
    for r in both_fail:
        cat[r["mutation"]]["same" if r["bfcl_category"] == r["toolpick_error_type"] else "different"] += 1
    print("\nError categories where both fail (secondary, not a gate):")
    print(table(["mutation", "same category", "different"],
                [[m, cat[m]["same"], cat[m]["different"]] for m in order if m in cat]))
    pairs = Counter((r["bfcl_error_type"], r["bfcl_category"], r["toolpick_error_type"]) for r in both_fail
                    if r["bfcl_category"] != r["toolpick_error_type"])
    if pairs:
        print(table(["BFCL error_type", "as taxonomy", "toolpick error_type", "count"],
                    [[a, b, c, n] for (a, b, c), n in sorted(pairs.items())]))

    with_system = [rec for rec in records if system_messages(rec)]
    dropped = sorted(i for i, kept in system_kept.items() if not kept)
    print(f"\nRecords with a system message: {len(with_system)} ({len(system_kept)} imported; the task keeps "
          f"every system text on {len(system_kept) - len(dropped)}, drops it on {len(dropped)})")
    for i in dropped:
        print(f"  system message dropped: {i}")

    bad = [r for r in dis if r["cause"] == "unclassified"]
    lost = [i for i in skipped if not reasons[i]]
    if bad:
        print(f"\nUNCLASSIFIED DISAGREEMENTS ({len(bad)}): not a documented deliberate difference of toolpick")
        print(table(["record", "mutation", "BFCL", "toolpick"], [
            [r["rec"].id, r["mutation"], f"{verdict(r['bfcl_pass'])} {r['bfcl_error_type']}",
             f"{verdict(r['toolpick_pass'])} {r['toolpick_error_type']}"] for r in bad]))
    if lost:
        print(f"\n{len(lost)} records were lost by the importer without a defect row")
    if dropped:
        print(f"\n{len(dropped)} imported records lost their system message (the model would not see it)")
    return 1 if bad or lost or dropped else 0


if __name__ == "__main__":
    sys.exit(main())
