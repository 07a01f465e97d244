//! Install anywhere (tier `packaging`): the Python wheel is built with maturin, installed into a fresh
//! venv and run from an empty directory; the GitHub Action's two steps (`action/install.sh`,
//! `action/run.sh`) run as `action.yml` wires them, against the mock endpoint; the Dockerfile passes
//! hadolint and the workflows and the action pass GitHub's schemas (check-jsonschema's vendored
//! copies). `docker build` and a real Actions runner are not available here: what they would add is
//! said in the README's Install section.

mod common;

use common::tiers::{Tier, require};
use common::{argv_with, stderr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what}: exit {:?}\n{}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        stderr(o)
    );
}

/// The wheel, built once for the tests of this binary (the dev profile, so it reuses the test build's
/// binary; a native `linux` tag, since manylinux needs the release workflow's container).
fn wheel(venv: &Path) -> &'static Path {
    static WHEEL: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = WHEEL.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let o = Command::new(venv.join("bin/maturin"))
            .args(["build", "--locked", "--profile", "dev", "--compatibility", "linux"])
            .args(["--auditwheel", "skip", "--out"])
            .arg(dir.path())
            .current_dir(common::repo())
            .output()
            .unwrap();
        ok(&o, "maturin build");
        let wheels: Vec<PathBuf> =
            std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.path()).collect();
        assert_eq!(wheels.len(), 1, "{wheels:?}");
        (dir, wheels[0].clone())
    });
    path
}

#[test]
fn the_wheel_installs_into_a_fresh_venv_and_runs_the_default_job_from_an_empty_directory() {
    let Some(tools) = require(Tier::Packaging) else { return };
    let wheel = wheel(&tools);
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    let version = env!("CARGO_PKG_VERSION");
    assert!(name.starts_with(&format!("toolpick-{version}-py3-none-")), "{name}");

    // Into a fresh venv, by the GitHub Action's install step (pip, offline: the wheel has no
    // dependencies); without GITHUB_PATH it prints the venv's bin directory.
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new("bash")
        .arg(common::repo().join("action/install.sh"))
        .env("RUNNER_TEMP", dir.path())
        .env("TOOLPICK_WHEEL", wheel)
        .env_remove("GITHUB_PATH")
        .output()
        .unwrap();
    ok(&o, "action/install.sh");
    let venv_bin = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    assert!(venv_bin.starts_with(dir.path()), "a fresh venv: {}", venv_bin.display());
    let bin = venv_bin.join("toolpick");
    let o = Command::new(&bin).arg("--version").output().unwrap();
    ok(&o, "--version");
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), format!("toolpick {version}"));

    let (empty, home) = (dir.path().join("empty"), dir.path().join("home"));
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let o = Command::new(&bin)
        .args(["run", "--run-id", "w", "--out", "out", "-q"])
        .current_dir(&empty)
        .env("HOME", &home)
        .env_remove("XDG_CACHE_HOME")
        .output()
        .unwrap();
    ok(&o, "toolpick run from the wheel");
    let reference = tempfile::tempdir().unwrap();
    let o = common::toolpick(
        &argv_with("run --run-id w -q --out {}", &[reference.path().to_str().unwrap()]),
        &common::repo(),
    );
    ok(&o, "toolpick run from the checkout");
    for file in ["summary.csv", "trials.jsonl"] {
        let ours = std::fs::read(empty.join("out/w").join(file)).unwrap();
        assert!(!ours.is_empty(), "{file}");
        assert!(ours == std::fs::read(reference.path().join("w").join(file)).unwrap(), "{file}");
    }
}

/// `action/run.sh` with the inputs `action.yml` maps into its environment, toolpick from the wheel on
/// PATH as `action/install.sh` leaves it.
struct ActionRun<'a> {
    path: &'a str,
    work: &'a Path,
}

impl ActionRun<'_> {
    fn run(&self, inputs: &[(&str, &str)]) -> (Output, String) {
        let output = self.work.join(format!("github-output-{}", inputs.len()));
        let _ = std::fs::remove_file(&output);
        let mut cmd = Command::new("bash");
        cmd.arg(common::repo().join("action/run.sh"))
            .current_dir(self.work)
            .env("PATH", self.path)
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_STEP_SUMMARY", self.work.join("step-summary.md"));
        for (k, v) in inputs {
            cmd.env(k, v);
        }
        let o = cmd.output().unwrap();
        (o, std::fs::read_to_string(&output).unwrap_or_default())
    }
}

#[test]
fn the_actions_steps_install_the_wheel_run_against_the_mock_endpoint_and_keep_history_on_a_failed_gate()
 {
    let Some(tools) = require(Tier::Packaging) else { return };
    let wheel = wheel(&tools);
    let mock = common::MockEnv::start(toolpick::mock::MockConfig::default(), &[]);
    let dir = tempfile::tempdir().unwrap();

    // The install step: a venv under RUNNER_TEMP, its bin directory appended to GITHUB_PATH.
    let github_path = dir.path().join("github-path");
    let o = Command::new("bash")
        .arg(common::repo().join("action/install.sh"))
        .env("RUNNER_TEMP", dir.path())
        .env("TOOLPICK_WHEEL", wheel)
        .env("GITHUB_PATH", &github_path)
        .output()
        .unwrap();
    ok(&o, "action/install.sh");
    let bin_dir = std::fs::read_to_string(&github_path).unwrap().trim().to_string();
    assert!(Path::new(&bin_dir).join("toolpick").is_file(), "{bin_dir}");
    let path = format!("{bin_dir}:{}", std::env::var("PATH").unwrap_or_default());

    let work = dir.path().join("repo");
    std::fs::create_dir_all(&work).unwrap();
    let history = work.join("toolpick-history/history.jsonl");
    let args = format!(
        "--catalog {} --dataset {} --backends openai,oracle --base-url {} --model mock --min-pass-rate 100 -q",
        mock.path("cat").display(),
        mock.path("ds.jsonl").display(),
        mock.url()
    );
    let action = ActionRun { path: &path, work: &work };
    let history_input = history.to_string_lossy().into_owned();
    for (night, run_id) in ["night-1", "night-2"].into_iter().enumerate() {
        let (o, outputs) = action.run(&[
            ("TOOLPICK_ARGS", &args),
            ("TOOLPICK_HISTORY", &history_input),
            ("TOOLPICK_RUN_ID", run_id),
        ]);
        // The mock answers as the lexical baseline does, which misses some tasks: the gate fails.
        assert_eq!(o.status.code(), Some(100), "{}", stderr(&o));
        assert!(outputs.lines().any(|l| l == "exit-code=100"), "{outputs}");
        let report_dir = outputs
            .lines()
            .find_map(|l| l.strip_prefix("report-dir="))
            .unwrap_or_else(|| panic!("no report-dir in {outputs}"));
        assert!(work.join(report_dir).join("report.html").is_file(), "{report_dir}");
        assert!(report_dir.ends_with(run_id), "{report_dir}");
        let lines = std::fs::read_to_string(&history).unwrap().lines().count();
        assert_eq!(lines, night + 1, "the history gets a line per night, gate failed or not");
    }
    let summary = std::fs::read_to_string(work.join("step-summary.md")).unwrap();
    assert!(summary.to_lowercase().contains("gate"), "{summary}");

    // A bad experiment file: exit 2, said in the outputs too.
    std::fs::write(work.join("bad.toml"), "trials = \"many\"\n").unwrap();
    let (o, outputs) = action.run(&[("TOOLPICK_CONFIG", "bad.toml"), ("TOOLPICK_RUN_ID", "bad")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.toml"), "{}", stderr(&o));
    assert!(outputs.lines().any(|l| l == "exit-code=2"), "{outputs}");
}

#[test]
fn the_dockerfile_and_the_workflows_pass_their_linters() {
    let Some(tools) = require(Tier::Packaging) else { return };
    let repo = common::repo();
    let o = Command::new(tools.join("bin/hadolint")).arg("Dockerfile").current_dir(&repo).output();
    ok(&o.unwrap(), "hadolint Dockerfile");
    let schema = |builtin: &str, files: &[&str]| {
        let o = Command::new(tools.join("bin/check-jsonschema"))
            .args(["--builtin-schema", builtin])
            .args(files)
            .current_dir(&repo)
            .output()
            .unwrap();
        ok(&o, builtin);
    };
    let mut workflows: Vec<String> = std::fs::read_dir(repo.join(".github/workflows"))
        .unwrap()
        .flatten()
        .map(|e| format!(".github/workflows/{}", e.file_name().to_string_lossy()))
        .collect();
    workflows.push("examples/github-actions-nightly.yml".into());
    assert!(workflows.len() >= 2, "{workflows:?}");
    schema("vendor.github-workflows", &workflows.iter().map(String::as_str).collect::<Vec<_>>());
    schema("vendor.github-actions", &["action.yml"]);
    // The action wires the scripts this file tests, and the image runs as a non-root user.
    let action = std::fs::read_to_string(repo.join("action.yml")).unwrap();
    for script in ["action/install.sh", "action/run.sh"] {
        assert!(action.contains(&format!("$GITHUB_ACTION_PATH/{script}")), "{script}");
    }
    let dockerfile = std::fs::read_to_string(repo.join("Dockerfile")).unwrap();
    let user = dockerfile.lines().rev().find_map(|l| l.strip_prefix("USER ")).unwrap_or("root");
    assert!(!["root", "0", "0:0"].contains(&user.trim()), "the image runs as {user}");
}
