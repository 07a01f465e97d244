//! The environment a server toolpick starts gets: the fixed variables and the ones named for it,
//! nothing inherited ([`scrubbed_env`]); and what may never be named for it ([`check_env`]): a model
//! provider's API key, or a secret-looking variable with an empty value.

use anyhow::Result;
use std::path::Path;

/// The environment a server gets: the fixed variables and the ones named for it, nothing inherited
/// (API keys and tokens in toolpick's own environment must never reach a tool server).
pub fn scrubbed_env(home: &Path, extra: &[(String, String)]) -> Vec<(String, String)> {
    let mut env = vec![
        (
            "PATH".to_string(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into()),
        ),
        ("HOME".to_string(), home.display().to_string()),
        ("TZ".to_string(), "UTC".to_string()),
        ("LANG".to_string(), "C.UTF-8".to_string()),
    ];
    for (k, v) in extra {
        env.retain(|(name, _)| name != k);
        env.push((k.clone(), v.clone()));
    }
    env
}

/// Variables that hold a model provider's API key: never given to a tool server, whatever the value.
pub const MODEL_KEY_VARIABLES: &[&str] = &[
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "TOGETHER_API_KEY",
    "OPENROUTER_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "COHERE_API_KEY",
    "FIREWORKS_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
];

/// Whether a variable's name says it holds a secret (a key, token, password or credential).
pub fn secret_looking(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"]
        .iter()
        .any(|word| upper.contains(word))
}

/// Refuse variables named for a server that must not reach it: a model provider's API key (even
/// named explicitly, even empty), and a secret-looking variable with an empty value (an empty value is
/// never a working secret, and a later session could fill it from toolpick's own environment).
pub fn check_env(env: &[(String, String)]) -> Result<()> {
    for (name, value) in env {
        let why = if MODEL_KEY_VARIABLES.contains(&name.to_ascii_uppercase().as_str()) {
            format!("`{name}` holds a model's API key; toolpick never passes one to a tool server")
        } else if value.is_empty() && secret_looking(name) {
            format!(
                "`{name}` looks like a secret and its value is empty; give the server the value it needs (KEY=VALUE) or leave it out"
            )
        } else {
            continue;
        };
        return Err(crate::error::InputError::new("--env", why).into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_is_the_fixed_set_plus_what_the_server_is_given() {
        let env = scrubbed_env(
            Path::new("/sandbox"),
            &[
                ("MEMORY_FILE_PATH".into(), "/sandbox/m.jsonl".into()),
                ("TZ".into(), "Europe/Paris".into()),
            ],
        );
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["PATH", "HOME", "LANG", "MEMORY_FILE_PATH", "TZ"]);
        assert!(env.contains(&("HOME".into(), "/sandbox".into())));
        assert!(env.contains(&("TZ".into(), "Europe/Paris".into())));
    }

    #[test]
    fn model_keys_and_empty_secrets_are_refused_and_named() {
        let env = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        for bad in [
            env(&[("OPENAI_API_KEY", "")]),
            env(&[("TZ", "UTC"), ("anthropic_api_key", "sk-x")]),
            env(&[("GITHUB_TOKEN", "")]),
            env(&[("DB_PASSWORD", "")]),
        ] {
            let err = format!("{:#}", check_env(&bad).unwrap_err());
            let named = bad.last().unwrap().0.as_str();
            assert!(err.contains(&format!("`{named}`")) && err.contains("--env"), "{err}");
        }
        // A secret a server needs, given its value, and ordinary empty variables pass.
        assert!(
            check_env(&env(&[("GITHUB_TOKEN", "ghp_x"), ("DEBUG", ""), ("MONKEY_MODE", "1")]))
                .is_ok()
        );
    }
}
