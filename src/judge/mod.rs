//! The judge of final answers: did the agent get the task done, not only call the right tools?
//!
//! Two methods (`--judge-method`, per dataset):
//! - **pass-rate** (StableToolBench's solvable pass rate): each round asks whether the final answer
//!   solves the request (Solved / Unsolved / Unsure); when unsure, a second question shows the process
//!   (every call and result) and its verdict is the round's. Both questions show the query, the answer
//!   and (the second) the process only — never the task's claims or reference answer, as StableToolBench's
//!   evaluator. Solved = 1, Unsure = 0.5, Unsolved = 0,
//!   averaged over `rounds` (default 3). An empty answer or one that gives up is Unsolved without
//!   asking. Judged: tasks that need a call (`single`, `multi`, `parallel`, `relevant`).
//! - **claims** (as MCP-Atlas scores answers): one question per expected claim (fulfilled 1, partly
//!   0.5, not 0); the coverage is their mean and the task is done when it reaches the claim threshold
//!   (default 0.75). Judged: tasks with `claims`.
//! - **auto** (the default): claims when the task has them, else pass-rate.
//!
//! The judge is any OpenAI-compatible endpoint behind the agent's own client ([`OpenAiBackend`]): the
//! same retries, rate limits, redaction and response cache (keyed by the prompt and a salt per round
//! and attempt, so rounds are distinct requests and a re-judging costs nothing). Verdicts go to
//! `judgements.jsonl` ([`crate::record::judgement`]); reports read them from there, so judging is a
//! pure function of the trial records and the judge's answers. Each verdict is appended to the file
//! (redacted, flushed) as it is received, so a judge pass that is killed loses only the judgements
//! in flight: the next pass keeps what was written (a torn last line is skipped) and asks only for the
//! rest. When the pass ends the file is rewritten in matrix order, one line per trial. A judgement whose requests failed
//! after their retries, or whose replies held no readable verdict three times, is a judge error — kept,
//! counted, retried by `--retry-errors` — never an "Unsolved".

pub mod check;
pub mod config;
pub mod pass;
pub mod prompts;
pub mod verdict;

use crate::agent::backends::openai::OpenAiBackend;
use crate::agent::cache::Cache;
use crate::agent::spec::{ModelSpec, Price};
use crate::agent::{Addressing, Backend, TurnContext};
use crate::dataset::Kind;
use crate::protocol::{Message, Usage};
use crate::record::LayoutKind;
use crate::record::judgement::{ClaimStatus, ClaimVerdict, Judgement, Method, Round, Status};
use anyhow::{Result, anyhow};
use prompts::PromptSet;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Rounds of the pass-rate method by default (StableToolBench's).
pub const DEFAULT_ROUNDS: usize = 3;
/// Coverage at which the claims method counts a task as done by default.
pub const DEFAULT_CLAIM_THRESHOLD: f64 = 0.75;
/// Times a reply without a readable verdict is asked again (a new request, not a cached one).
pub const READ_ATTEMPTS: usize = 3;
/// Longest tool result shown to the judge in a process, in characters.
const PROCESS_RESULT_MAX: usize = 1500;

/// Which method judges a dataset's tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodChoice {
    Auto,
    Fixed(Method),
}

impl MethodChoice {
    pub fn parse(s: &str) -> Option<MethodChoice> {
        match s {
            "auto" => Some(MethodChoice::Auto),
            other => Method::parse(other).map(MethodChoice::Fixed),
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            MethodChoice::Auto => "auto",
            MethodChoice::Fixed(m) => m.as_str(),
        }
    }
}

/// `[DATASET=]METHOD` (`--judge-method`): the dataset's name (`*` or none: every dataset) and method.
pub fn parse_method_flag(s: &str) -> Result<(String, MethodChoice), String> {
    let (dataset, method) = s.split_once('=').unwrap_or(("*", s));
    let choice = MethodChoice::parse(method.trim())
        .ok_or_else(|| format!("unknown judge method `{method}`; use auto, pass-rate or claims"))?;
    Ok((dataset.trim().to_string(), choice))
}

/// Everything a judging needs.
#[derive(Debug, Clone)]
pub struct JudgeConfig {
    /// The judge's endpoint (an `openai` model spec; `name` labels its verdicts).
    pub spec: ModelSpec,
    pub rounds: usize,
    pub claim_threshold: f64,
    pub prompts: PromptSet,
    /// Per dataset name; `*` for every other dataset.
    pub methods: BTreeMap<String, MethodChoice>,
}

impl JudgeConfig {
    /// The method that judges a trial, or `None` when the trial is not judged (a task that needs no
    /// call under pass-rate, a task without claims under claims).
    pub fn method_for(&self, dataset: &str, kind: Kind, has_claims: bool) -> Option<Method> {
        let choice = self
            .methods
            .get(dataset)
            .or_else(|| self.methods.get("*"))
            .copied()
            .unwrap_or(MethodChoice::Auto);
        let method = match choice {
            MethodChoice::Auto if has_claims => Method::Claims,
            MethodChoice::Auto => Method::PassRate,
            MethodChoice::Fixed(m) => m,
        };
        match method {
            Method::Claims => has_claims.then_some(Method::Claims),
            Method::PassRate => {
                matches!(kind, Kind::Single | Kind::Multi | Kind::Parallel | Kind::Relevant)
                    .then_some(Method::PassRate)
            }
        }
    }

    /// What `run.json` records of the judge (no key, only the variable's name).
    pub fn describe(&self) -> Value {
        json!({
            "name": self.spec.name,
            "model": self.spec.model,
            "base_url": self.spec.base_url.as_deref().map(crate::redact::url::display),
            "api_key_env": self.spec.api_key_env,
            "temperature": self.spec.temperature,
            "rounds": self.rounds,
            "claim_threshold": self.claim_threshold,
            "methods": self.methods.iter().map(|(k, v)| (k.clone(), json!(v.as_str()))).collect::<serde_json::Map<_, _>>(),
            "prompts": self.prompts.digest,
            "prompt_files": self.prompts.sources.iter().map(|(n, s)| (n.clone(), json!(s))).collect::<serde_json::Map<_, _>>(),
        })
    }

    /// Whether an earlier judgement answers this configuration for this trial.
    fn still_valid(&self, j: &Judgement, method: Method, digest: &str) -> bool {
        j.judge == self.spec.name
            && j.method == method
            && j.prompts == self.prompts.digest
            && j.answer_digest == digest
            && match method {
                Method::PassRate => j.round_count == self.rounds,
                Method::Claims => j.threshold == Some(self.claim_threshold),
            }
    }
}

/// The judge's endpoint: one prompt in, the reply's text and usage out.
pub struct JudgeClient {
    backend: OpenAiBackend,
    price: Option<Price>,
    /// A placeholder task for the turn context (the endpoint client reads only messages and salts).
    task: crate::dataset::Task,
}

impl JudgeClient {
    pub fn new(spec: &ModelSpec, cache: Option<Arc<Cache>>) -> Result<JudgeClient> {
        let task = crate::dataset::importers::task(
            "judge".into(),
            "judge".into(),
            Kind::Single,
            vec![],
            String::new(),
            0,
        );
        Ok(JudgeClient {
            backend: OpenAiBackend::new(spec.clone(), cache)?,
            price: spec.price,
            task,
        })
    }

    /// Check the endpoint before judging (one cheap request), as a run checks its models.
    pub async fn preflight(&self) -> Result<(), String> {
        self.backend.preflight().await.map(|_| ())
    }

    /// One request: the prompt as the user message. `salt` separates rounds and attempts (and their
    /// cache entries).
    pub async fn ask(&self, prompt: &str, salt: usize) -> Result<(String, Usage)> {
        let messages = vec![Message::User { content: prompt.to_string() }];
        let addressing = Addressing::new();
        let ctx = TurnContext {
            task: &self.task,
            messages: &messages,
            functions: &[],
            deferred: &[],
            groups: &[],
            layout: LayoutKind::Flat,
            addressing: &addressing,
            seed: salt as u64,
            trial: salt,
        };
        let turn = self.backend.respond(&ctx).await?;
        Ok((turn.content.unwrap_or_default(), turn.usage))
    }

    /// Ask until `read` finds a verdict in the reply ([`READ_ATTEMPTS`] requests at most, each with its
    /// own salt); the usage of every request is added to `usage`.
    async fn ask_until<T>(
        &self,
        prompt: &str,
        salt: usize,
        usage: &mut Usage,
        read: impl Fn(&str) -> Option<T>,
    ) -> Result<T> {
        let mut last = String::new();
        for attempt in 0..READ_ATTEMPTS {
            let (reply, u) = self.ask(prompt, salt * 8 + attempt).await?;
            usage.add(&u);
            if let Some(v) = read(&reply) {
                return Ok(v);
            }
            last = reply;
        }
        let snippet: String =
            last.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(160).collect();
        Err(anyhow!(
            "judge_unreadable: no verdict in the judge's reply after {READ_ATTEMPTS} attempts (last: {snippet:?})"
        ))
    }

    pub fn cost(&self, usage: &Usage) -> Option<f64> {
        self.price.map(|p| p.cost(usage))
    }
}

/// What one judgement needs of its trial.
#[derive(Debug, Clone)]
pub struct Pending {
    pub trial_id: String,
    pub matrix_index: usize,
    pub method: Method,
    pub query: String,
    pub answer: Option<String>,
    /// The claims method's claims (never shown to the pass-rate questions).
    pub claims: Vec<String>,
    /// Pass-rate: the calls and results, as shown to the judge when the answer alone is inconclusive.
    pub process: String,
    pub digest: String,
}

/// The two pass-rate questions (the answer check, the process check) for one trial: query, answer and
/// process only — no claims, no reference answer — as StableToolBench's evaluator asks them.
pub fn pass_rate_prompts(
    prompts: &PromptSet,
    query: &str,
    answer: &str,
    process: &str,
) -> (String, String) {
    let values = [("query", query), ("answer", answer), ("process", process)];
    (
        prompts::render(&prompts.answer_status, &values),
        prompts::render(&prompts.task_solved, &values),
    )
}

/// The process of an episode as the judge reads it: each call with its arguments and its result.
pub fn process_text(messages: &[Message]) -> String {
    let mut out = Vec::new();
    for m in messages {
        match m {
            Message::Assistant { tool_calls, .. } => {
                for c in tool_calls {
                    out.push(format!("call {}({})", c.name, c.arguments));
                }
            }
            Message::Tool { content, .. } => {
                out.push(format!("result: {}", crate::text::one_line(content, PROCESS_RESULT_MAX)));
            }
            _ => {}
        }
    }
    if out.is_empty() { "(no tool calls)".into() } else { out.join("\n") }
}

/// Judge one trial. Never fails: a failure is the judgement's `error`.
pub async fn judge_one(
    client: &JudgeClient,
    config: &JudgeConfig,
    p: &Pending,
    judge: &str,
) -> Judgement {
    let mut j = Judgement {
        trial_id: p.trial_id.clone(),
        matrix_index: p.matrix_index,
        judge: judge.to_string(),
        method: p.method,
        prompts: config.prompts.digest.clone(),
        answer_digest: p.digest.clone(),
        rounds: vec![],
        claims: vec![],
        score: None,
        done: None,
        round_count: if p.method == Method::PassRate { config.rounds } else { 0 },
        threshold: (p.method == Method::Claims).then_some(config.claim_threshold),
        short_circuit: None,
        usage: Usage::default(),
        cost_usd: None,
        error: None,
    };
    let answer = p.answer.as_deref().map(str::trim).unwrap_or_default();
    let short = if answer.is_empty() {
        Some("no final answer")
    } else if config.prompts.gives_up(answer) {
        Some("the answer gives up")
    } else {
        None
    };
    let mut usage = Usage::default();
    let outcome: Result<()> = async {
        match p.method {
            Method::PassRate => {
                for r in 0..config.rounds {
                    if let Some(why) = short {
                        j.rounds.push(Round {
                            status: Status::Unsolved,
                            answer_status: Status::Unsolved,
                            answer_reason: why.into(),
                            process_status: None,
                            process_reason: None,
                        });
                        continue;
                    }
                    let (answer_prompt, process_prompt) =
                        pass_rate_prompts(&config.prompts, &p.query, answer, &p.process);
                    let (status, reason) = client
                        .ask_until(&answer_prompt, r, &mut usage, |reply| {
                            verdict::status(reply, "answer_status")
                        })
                        .await?;
                    let mut round = Round {
                        status,
                        answer_status: status,
                        answer_reason: reason,
                        process_status: None,
                        process_reason: None,
                    };
                    if status == Status::Unsure {
                        let (ps, why) = client
                            .ask_until(&process_prompt, r, &mut usage, |reply| {
                                verdict::status(reply, "task_status")
                            })
                            .await?;
                        round.status = ps;
                        round.process_status = Some(ps);
                        round.process_reason = Some(why);
                    }
                    j.rounds.push(round);
                }
                let score = j.rounds.iter().map(|r| r.status.score()).sum::<f64>()
                    / j.rounds.len().max(1) as f64;
                j.score = Some(score);
                j.done = Some(score > 0.5);
            }
            Method::Claims => {
                for claim in &p.claims {
                    if let Some(why) = short {
                        j.claims.push(ClaimVerdict {
                            claim: claim.clone(),
                            status: ClaimStatus::Not,
                            reason: why.into(),
                        });
                        continue;
                    }
                    let values = [
                        ("query", p.query.as_str()),
                        ("answer", answer),
                        ("claim", claim.as_str()),
                    ];
                    let prompt = prompts::render(&config.prompts.claim, &values);
                    let (status, reason) =
                        client.ask_until(&prompt, 0, &mut usage, verdict::claim).await?;
                    j.claims.push(ClaimVerdict { claim: claim.clone(), status, reason });
                }
                let coverage = j.claims.iter().map(|c| c.status.score()).sum::<f64>()
                    / j.claims.len().max(1) as f64;
                j.score = Some(coverage);
                j.done = Some(coverage + 1e-9 >= config.claim_threshold);
            }
        }
        Ok(())
    }
    .await;
    if let Err(e) = outcome {
        j.error = Some(crate::redact::global().redact(&e.to_string()).into_owned());
        j.score = None;
        j.done = None;
    }
    j.short_circuit = short.map(String::from);
    j.cost_usd = client.cost(&usage).filter(|_| usage.prompt_tokens + usage.completion_tokens > 0);
    j.usage = usage;
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(methods: &[(&str, MethodChoice)]) -> JudgeConfig {
        JudgeConfig {
            spec: ModelSpec::baseline("openai"),
            rounds: 3,
            claim_threshold: 0.75,
            prompts: PromptSet::load(None).unwrap(),
            methods: methods.iter().map(|(d, m)| (d.to_string(), *m)).collect(),
        }
    }

    #[test]
    fn methods_per_dataset_and_what_each_judges() {
        let c =
            config(&[("stb", MethodChoice::Fixed(Method::PassRate)), ("*", MethodChoice::Auto)]);
        assert_eq!(c.method_for("starter", Kind::Single, true), Some(Method::Claims));
        assert_eq!(c.method_for("starter", Kind::Single, false), Some(Method::PassRate));
        assert_eq!(
            c.method_for("starter", Kind::Abstain, false),
            None,
            "a task that needs no call is not judged for solvability"
        );
        assert_eq!(c.method_for("stb", Kind::Multi, true), Some(Method::PassRate));
        let claims = config(&[("*", MethodChoice::Fixed(Method::Claims))]);
        assert_eq!(claims.method_for("x", Kind::Single, false), None);
        assert_eq!(
            parse_method_flag("stb=pass-rate"),
            Ok(("stb".into(), MethodChoice::Fixed(Method::PassRate)))
        );
        assert_eq!(
            parse_method_flag("claims"),
            Ok(("*".into(), MethodChoice::Fixed(Method::Claims)))
        );
        assert!(parse_method_flag("x=vibes").is_err());
    }

    #[test]
    fn pass_rate_prompts_show_query_answer_and_process_only() {
        let set = PromptSet::load(None).unwrap();
        let (answer_prompt, process_prompt) =
            pass_rate_prompts(&set, "QUERY-7f3", "ANSWER-19c", "call x({})\nresult: PROCESS-a42");
        for p in [&answer_prompt, &process_prompt] {
            assert!(p.contains("QUERY-7f3") && p.contains("ANSWER-19c"), "{p}");
            assert!(
                !p.contains("{{")
                    && !p.contains("expected_facts")
                    && !p.to_lowercase().contains("reference answer"),
                "{p}"
            );
        }
        assert!(!answer_prompt.contains("PROCESS-a42"), "the answer check sees the answer alone");
        assert!(process_prompt.contains("PROCESS-a42"));
    }

    #[test]
    fn process_shows_calls_and_results() {
        let messages = vec![
            Message::User { content: "q".into() },
            Message::Assistant {
                content: None,
                tool_calls: vec![crate::protocol::ToolCall {
                    id: "1".into(),
                    name: "get".into(),
                    arguments: "{\"a\":1}".into(),
                }],
            },
            Message::Tool {
                tool_call_id: "1".into(),
                name: "get".into(),
                content: "{\n \"x\": 2\n}".into(),
            },
        ];
        assert_eq!(process_text(&messages), "call get({\"a\":1})\nresult: { \"x\": 2 }");
        assert_eq!(process_text(&[]), "(no tool calls)");
    }
}
