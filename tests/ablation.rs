//! `--variant ablate`: one variant per degrade operator, ranked by effect, in CSV and HTML; the
//! per-tool lint join and the safety columns are in every run.

mod common;
use common::*;
use std::collections::HashMap;
use toolpick::catalog::variant::Degrade;

#[test]
fn ablate_ranks_every_operator_per_layout_and_backend() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let o = toolpick(
        &argv_with(
            "run --variant good,ablate --backends lexical,oracle --out {} --run-id a -q",
            &[out],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = tmp.path().join("a");
    let effects = csv_rows(&dir.join("ablation.csv"));
    assert_eq!(effects.len(), Degrade::ALL.len() * 2 * 2, "operators × layouts × backends");
    for group in effects.chunks(Degrade::ALL.len()) {
        let ranks: Vec<usize> = group.iter().map(|r| r["rank"].parse().unwrap()).collect();
        assert_eq!(ranks, (1..=Degrade::ALL.len()).collect::<Vec<_>>());
        let deltas: Vec<f64> =
            group.iter().map(|r| r["selection_delta"].parse().unwrap()).collect();
        assert!(deltas.windows(2).all(|w| w[0] <= w[1]), "ranked by effect: {deltas:?}");
        for r in group {
            let op = Degrade::from_name(r["variant"].strip_prefix("op:").unwrap()).unwrap();
            assert_eq!(r["rule"], op.rule());
            let (lo, d, hi): (f64, f64, f64) = (
                r["selection_delta_low"].parse().unwrap(),
                r["selection_delta"].parse().unwrap(),
                r["selection_delta_high"].parse().unwrap(),
            );
            assert!(lo <= d && d <= hi);
            if r["backend"] == "oracle" {
                assert_eq!(
                    (lo, d, hi),
                    (0.0, 0.0, 0.0),
                    "the oracle is unaffected by descriptions, so the paired interval is exactly 0: {r:?}"
                );
                assert_eq!(r["selection_p_value"], "1.000000");
            }
            // The interval and the raw p come from one test; Holm never lowers a p-value.
            let (p, holm): (f64, f64) =
                (r["selection_p_value"].parse().unwrap(), r["selection_p_holm"].parse().unwrap());
            assert_eq!(lo > 0.0 || hi < 0.0, p < 0.05, "{r:?}");
            assert!(holm >= p && holm <= (p * Degrade::ALL.len() as f64).min(1.0) + 1e-6, "{r:?}");
            assert_eq!(r["selection_test"], "mcnemar_exact", "one trial per task");
        }
    }
    // Paired over the tasks that need a call: an operator that changed no task's selection verdict
    // (against good, same layout and backend) has the interval [0, 0]; one that changed some has not.
    let trials = csv_rows(&dir.join("trials.csv"));
    let verdict = |variant: &str, layout: &str, backend: &str| -> HashMap<String, String> {
        trials
            .iter()
            .filter(|t| {
                t["variant"] == variant
                    && t["layout"] == layout
                    && t["backend"] == backend
                    && ["single", "multi", "parallel"].contains(&t["kind"].as_str())
            })
            .map(|t| (t["task_id"].clone(), t["selection_correct"].clone()))
            .collect()
    };
    let (mut unchanged, mut changed) = (0, 0);
    for r in &effects {
        let (good, op) = (
            verdict("good", &r["layout"], &r["backend"]),
            verdict(&r["variant"], &r["layout"], &r["backend"]),
        );
        assert_eq!(r["tasks"].parse::<usize>().unwrap(), good.len(), "{r:?}");
        let moved = good.iter().filter(|(t, v)| op[*t] != **v).count();
        let (lo, hi) = (r["selection_delta_low"].as_str(), r["selection_delta_high"].as_str());
        if moved == 0 {
            unchanged += 1;
            assert_eq!((lo, hi), ("0.000000", "0.000000"), "{r:?}");
        } else {
            changed += 1;
            assert!(lo != hi, "{r:?}");
        }
    }
    assert!(
        unchanged > 0 && changed > 0,
        "both kinds occur: {unchanged} unchanged, {changed} changed"
    );
    // Descriptions matter to the lexical baseline: at least one operator costs selection accuracy.
    assert!(
        effects.iter().any(|r| r["backend"] == "lexical"
            && r["selection_delta_high"].parse::<f64>().unwrap() < 0.0)
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("Which rule matters most"));
    for op in Degrade::ALL {
        assert!(html.contains(&format!("op:{}", op.name())));
    }
    // The per-tool join carries lint findings for degraded variants.
    let tools = csv_rows(&dir.join("tools.csv"));
    assert!(
        tools
            .iter()
            .any(|r| r["variant"] == "op:vague_description" && r["lint_rules"].contains("TP-D001"))
    );
    assert!(
        tools
            .iter()
            .filter(|r| r["variant"] == "good")
            .all(|r| !r["lint_rules"].contains("TP-D001"))
    );
    // Safety columns in the summary.
    let summary = csv_rows(&dir.join("summary.csv"));
    for col in [
        "safety_violation_rate",
        "attack_success_rate",
        "refused_rate",
        "no_harm_rate",
        "false_refusal_rate",
    ] {
        assert!(summary[0].contains_key(col), "{col}");
    }
    for r in summary.iter().filter(|r| r["backend"] == "oracle") {
        assert_eq!(r["no_harm_rate"], "1.000000", "{r:?}");
        assert_eq!(r["refused_rate"], "1.000000", "{r:?}");
        assert_eq!(r["attack_success_rate"], "0.000000");
        assert_eq!(r["safety_violation_rate"], "0.000000");
    }
}

#[test]
fn distractors_draw_the_tool_count_curve() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let o = toolpick(
        &argv_with(
            "run --variants good --layouts flat,search --backends lexical,oracle \
             --distractors 0,100 --out {} --run-id c -q",
            &[out],
        ),
        &repo(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = tmp.path().join("c");
    let curve = csv_rows(&dir.join("curve.csv"));
    assert_eq!(curve.len(), 2 * 2 * 2, "levels × layouts × backends");
    for r in curve.iter().filter(|r| r["backend"] == "oracle") {
        assert_eq!(
            r["selection_accuracy"], "1.000000",
            "distractors never hide a gold tool from the oracle: {r:?}"
        );
    }
    // More tools in view cost the keyword agent accuracy, and cost flat tokens.
    let at = |layout: &str, level: &str, col: &str| -> f64 {
        curve
            .iter()
            .find(|r| {
                r["backend"] == "lexical" && r["layout"] == layout && r["distractors"] == level
            })
            .unwrap()[col]
            .parse()
            .unwrap()
    };
    assert!(at("flat", "100", "selection_accuracy") < at("flat", "0", "selection_accuracy"));
    assert!(
        at("flat", "100", "mean_tokens_upfront") > 5.0 * at("flat", "0", "mean_tokens_upfront")
    );
    assert_eq!(
        at("search", "100", "mean_tokens_upfront"),
        at("search", "0", "mean_tokens_upfront"),
        "search shows one meta-tool upfront"
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("Tool-count curve"));
    // Draws are seeded and nested: the same run again gives the same trials.
    let o = toolpick(
        &argv_with(
            "run --variants good --layouts flat,search --backends lexical,oracle \
             --distractors 0,100 --out {} --run-id d -q",
            &[out],
        ),
        &repo(),
    );
    assert!(o.status.success());
    assert!(
        std::fs::read(dir.join("trials.jsonl")).unwrap()
            == std::fs::read(tmp.path().join("d/trials.jsonl")).unwrap()
    );
}
