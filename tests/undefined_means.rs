//! Undefined means are written as missing values, never `NaN` (issue 12, part 5): a cell whose every
//! trial ended in an infrastructure error has no scored trial, so its mean steps and tokens are
//! undefined — empty in CSV, null in Parquet and JSON, "n/a" on the HTML page, in Markdown and on stdout.

mod common;
use common::*;
use polars_io::SerReader;
use polars_io::parquet::read::ParquetReader;
use toolpick::mock::{self, Fault, MockConfig};

#[test]
fn a_cell_where_every_trial_errored_has_no_nan_anywhere() {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    // Every chat request fails (the preflight's GET /models still answers).
    let config = MockConfig { faults: vec![(Fault::ServerError, 1)], ..Default::default() };
    let server = rt.block_on(mock::spawn("127.0.0.1:0".parse().unwrap(), config)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_small_catalog(&dir.path().join("cat"));
    std::fs::write(dir.path().join("ds.jsonl"), SMALL_DATASET).unwrap();
    let url = server.base_url();
    let o = toolpick(
        &argv_with(
            "run --catalog cat --dataset ds.jsonl --backends lexical,openai --model mock \
             --base-url {} --out out --run-id r --max-attempts 1 --breaker 0 --no-cache \
             --layouts flat --variants good",
            &[&url],
        ),
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let run = dir.path().join("out/r");

    // The failing cell is there, with its errors and no scored trial; the lexical cell is defined.
    let rows = summary_rows(&run);
    let failing = rows
        .iter()
        .find(|r| r["backend"] == "mock")
        .expect("the endpoint's cell (labelled by its model)");
    let fine = rows.iter().find(|r| r["backend"] == "lexical").expect("lexical cell");
    assert_ne!(failing["infra_errors"], "0");
    for col in [
        "mean_steps",
        "mean_steps_low",
        "mean_steps_high",
        "mean_tokens_upfront",
        "mean_tokens_total",
        "mean_tokens_total_low",
        "mean_tokens_total_high",
    ] {
        assert_eq!(failing[col], "", "{col} of a cell without scored trials is a missing value");
        assert!(
            fine[col].parse::<f64>().is_ok_and(f64::is_finite),
            "{col} of the lexical cell: {}",
            fine[col]
        );
    }

    // No text output spells NaN (Rust's and JavaScript's spelling), and the people's pages say n/a for the failing cell.
    let mut texts = 0;
    for e in std::fs::read_dir(&run).unwrap().flatten() {
        let p = e.path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        // Parquet and the transcripts index are binary.
        if p.is_file() && !name.ends_with(".parquet") && !name.ends_with(".idx") {
            let text = std::fs::read_to_string(&p).unwrap();
            assert!(!text.contains("NaN"), "NaN in {name}");
            texts += 1;
        }
    }
    assert!(texts >= 6, "{texts} text outputs");
    let md = std::fs::read_to_string(run.join("summary.md")).unwrap();
    let row = md.lines().find(|l| l.contains("| mock |")).expect("mock row in summary.md");
    assert!(row.contains("n/a"), "{row}");
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("n/a"));
    let out = stdout(&o);
    let line = out.lines().find(|l| l.contains(" mock ")).expect("mock line on stdout");
    assert!(line.contains("n/a") && !out.contains("NaN"), "{out}");

    // Parquet: null, not NaN.
    let df = ParquetReader::new(std::fs::File::open(run.join("summary.parquet")).unwrap())
        .finish()
        .unwrap();
    let backends = df.column("backend").unwrap().str().unwrap().clone();
    let i = (0..df.height()).find(|&i| backends.get(i) == Some("mock")).unwrap();
    for col in ["mean_steps", "mean_tokens_total", "mean_steps_low"] {
        let v = df.column(col).unwrap().f64().unwrap().get(i);
        assert_eq!(v, None, "{col} is null in summary.parquet");
    }
}
