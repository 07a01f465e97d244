//! Running an experiment: the matrix of suites (dataset × catalog) × variants × layouts × models ×
//! tasks × trials, in stages:
//!
//! - [`matrix`]: the settings ([`RunConfig`]) and the part of them hashed into `matrix_hash`;
//! - [`plan`]: inputs loaded and checked, cells and backends built, the matrix laid out as jobs
//!   ([`prepare`] → [`Prepared`]); nothing written;
//! - [`execute`]: the episodes run, resumed and compacted ([`execute()`]); what happens is sent as
//!   [`events`] to the trial writer, the timings and the progress display;
//! - [`provider_limits`]: what each cell presents to a provider (tools, names, estimated prompt),
//!   checked against the protocol's limits before the first request;
//! - [`serving`]: the same presentations served over MCP (`mcp serve`, `mcp collect`, `mcp-agent`).
//!
//! Generation appends trial records to `trials.jsonl` as episodes finish (one writer, flushed per
//! record); everything after that — scores, summary, reports — is a pure function of those records
//! (`report::render_locked`, called by the command line's pipeline, `cli::pipeline`). Rerunning into the same run directory resumes: finished trials are
//! skipped, infrastructure errors are kept unless `--retry-errors`, and the file is compacted into
//! matrix order at the end, so a resumed run ends byte-identical to an uninterrupted one. The run holds
//! the directory lock throughout and first removes what killed processes left ([`guard`]).

pub mod config;
pub mod events;
pub mod execute;
pub mod failfast;
mod lint_summary;
pub mod live;
pub mod live_pool;
pub mod matrix;
pub mod merge;
pub mod plan;
pub mod progress;
pub mod provider_limits;
pub mod run_ids;
pub mod scenario;
pub mod serving;
pub mod shard;
pub mod subset;
pub mod trial;

pub use crate::record::meta::RunMeta;
pub use crate::record::{Tokens, Trial};
pub use execute::{ExecOptions, RunOutcome, execute};
pub use matrix::{RunConfig, executes_live};
pub use plan::{Prepared, episode_seed, prepare};
pub use run_ids::{check_run_id, point_latest, utc_stamp};
pub use scenario::with_distractors;
