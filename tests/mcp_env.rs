//! A live server never sees toolpick's own environment (API keys above all): server-everything's
//! `get-env` tool reports what its process got. Alone in its test binary, because it sets variables in
//! this process's environment. Of the `mcp-npm` tier (tests/common/tiers.rs).

mod common;
use common::tiers::{self, Tier};

#[test]
fn the_model_api_key_and_other_variables_do_not_reach_the_server() {
    if !tiers::ready(Tier::McpNpm) {
        return;
    }
    let dir = tiers::installed(Tier::McpNpm);
    let entry = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    // SAFETY: the only test of this binary, set before any thread of ours reads the environment.
    unsafe {
        std::env::set_var("OPENAI_API_KEY", "sk-canary-must-not-leak-1234");
        std::env::set_var("TOOLPICK_CANARY", "canary-value-5678");
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let work = tempfile::tempdir().unwrap();
    let reported = runtime.block_on(async {
        let command = toolpick::mcp::client::ServerCommand {
            program: "node".into(),
            args: vec![entry.display().to_string()],
            env: vec![("GIVEN_TO_SERVER".into(), "yes".into())],
        };
        let session = toolpick::mcp::client::Session::connect(
            &command,
            Default::default(),
            Some(work.path()),
        )
        .await
        .unwrap();
        let result = session
            .call_tool("get-env", Default::default(), std::time::Duration::from_secs(20))
            .await
            .unwrap();
        session.close().await.unwrap();
        result
    });
    let text = reported.to_string();
    assert!(text.contains("GIVEN_TO_SERVER"), "the server did not report its environment: {text}");
    assert!(
        !text.contains("sk-canary-must-not-leak-1234") && !text.contains("OPENAI_API_KEY"),
        "the API key reached the server: {text}"
    );
    assert!(
        !text.contains("canary-value-5678"),
        "an inherited variable reached the server: {text}"
    );
    assert!(
        text.contains(&work.path().display().to_string()),
        "HOME is not the directory given: {text}"
    );
}
