//! toolpick: a benchmark harness that measures how well LLM agents pick tools.
//!
//! Data flows one way: catalog + dataset → description variant → layout (flat | progressive) → agent
//! episode (backend) → trial records (JSONL) → scores → summary → exporters; [`judge`] adds verdicts on
//! final answers beside the trial records (`judgements.jsonl`). Generation ([`run`]) and
//! scoring/reporting ([`score`], [`report`]) are separate: reports are pure functions of trial files.

// First, so that `outln!` is in scope in every module after it.
#[macro_use]
pub mod messages;

pub mod agent;
pub mod allocator;
pub mod analysis;
pub mod bundle;
pub mod catalog;
pub mod cli;
pub mod compare;
pub mod crashpoint;
pub mod dataset;
pub mod error;
pub mod exec;
pub mod files;
pub mod gate;
pub mod judge;
pub mod layout;
pub mod lint;
pub mod mcp;
pub mod mock;
pub mod protocol;
pub mod record;
pub mod redact;
pub mod report;
pub mod rules;
pub mod run;
pub mod score;
pub mod text;
pub mod tokens;
