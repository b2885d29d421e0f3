//! Tool name conflicts: each registration path (`register_tool` inside a
//! call, `Environment::register_tool`, `register_global_tool`) against each
//! scope visible from where it happens (built-in, global, environment, the
//! current and enclosing natural calls), and `overwrite(true)`.
//!
//! The global registry is shared by the whole test binary: global names here
//! start with `conflicts_` and are removed at the end of each test.

use north_natural::{
    Environment, Error, Tool, ToolOrigin, ToolRegistrationError, ToolScope, environment,
    get_environment, natural, register_global_tool, register_tool, remove_global_tool,
};
use serde_json::json;

use crate::stub;

fn tool(name: &str) -> Tool {
    Tool::from_fn(name, "A test tool.", json!({"type": "object"}), |_, a| {
        Ok(a)
    })
}

/// `None` when the registration succeeded, else where the conflicting tool
/// lives.
fn conflict<T: std::fmt::Debug>(result: Result<T, Error>) -> Option<ToolOrigin> {
    match result {
        Ok(_) => None,
        Err(Error::Registration(ToolRegistrationError::Conflict { existing, .. })) => {
            Some(existing)
        }
        Err(other) => panic!("not a conflict: {other}"),
    }
}

fn call(function: &str) -> Option<ToolOrigin> {
    Some(ToolOrigin::Call {
        function: function.to_owned(),
    })
}

#[natural]
async fn outer_registers(global: String) -> north_natural::Result<Vec<Option<ToolOrigin>>> {
    assert_eq!(register_tool(tool("outer_call_tool"))?, ToolScope::Call);
    inner_registers(global).await
}

#[natural]
async fn inner_registers(global: String) -> north_natural::Result<Vec<Option<ToolOrigin>>> {
    Ok(vec![
        conflict(register_tool(tool("nh_eval"))),
        conflict(register_tool(tool(&global))),
        conflict(register_tool(tool("env_tool"))),
        conflict(register_tool(tool("outer_call_tool"))),
        conflict(register_tool(tool("inner_call_tool"))),
        conflict(register_tool(tool("inner_call_tool"))),
        conflict(register_tool(tool("outer_call_tool").overwrite(true))),
        conflict(register_tool(tool("nh_dir").overwrite(true))),
    ])
}

#[tokio::test]
async fn a_call_registration_is_checked_against_every_visible_scope() {
    let global = "conflicts_in_call_global";
    register_global_tool(tool(global)).unwrap();
    let env = stub([]);
    env.register_tool(tool("env_tool")).unwrap();
    let outcomes = environment(env, outer_registers(global.to_owned()))
        .await
        .unwrap();
    assert!(remove_global_tool(global));
    assert_eq!(
        outcomes,
        [
            Some(ToolOrigin::BuiltIn),
            Some(ToolOrigin::Global),
            Some(ToolOrigin::Environment),
            call("outer_registers"),
            None,
            call("inner_registers"),
            None,
            None,
        ]
    );
}

#[natural]
async fn registers_into(
    env: Environment,
    name: String,
) -> north_natural::Result<Vec<Option<ToolOrigin>>> {
    register_tool(tool(&name))?;
    Ok(vec![
        // The current environment and another one: the call's tools stay
        // visible to calls nested under either.
        conflict(get_environment()?.register_tool(tool(&name))),
        conflict(env.register_tool(tool(&name))),
        conflict(env.register_tool(tool(&name).overwrite(true))),
    ])
}

#[tokio::test]
async fn an_environment_registration_is_checked_against_every_visible_scope() {
    let global = "conflicts_env_global";
    register_global_tool(tool(global)).unwrap();
    let env = stub([]);
    env.register_tool(tool("mine")).unwrap();
    let outcomes = [
        conflict(env.register_tool(tool("nh_help"))),
        conflict(env.register_tool(tool(global))),
        conflict(env.register_tool(tool("mine"))),
        conflict(env.register_tool(tool("mine").overwrite(true))),
    ];
    assert!(remove_global_tool(global));
    assert_eq!(
        outcomes,
        [
            Some(ToolOrigin::BuiltIn),
            Some(ToolOrigin::Global),
            Some(ToolOrigin::Environment),
            None,
        ]
    );

    // From inside a natural call, the call's tools are visible too.
    let other = stub([]);
    let outcomes = environment(env, registers_into(other, "call_tool".into()))
        .await
        .unwrap();
    assert_eq!(
        outcomes,
        [call("registers_into"), call("registers_into"), None]
    );
}

#[natural]
async fn registers_globally(name: String) -> north_natural::Result<Vec<Option<ToolOrigin>>> {
    register_tool(tool(&name))?;
    Ok(vec![conflict(register_global_tool(tool(&name)))])
}

#[tokio::test]
async fn a_global_registration_is_checked_against_every_visible_scope() {
    let global = "conflicts_global_global";
    register_global_tool(tool(global)).unwrap();
    let outcomes = [
        conflict(register_global_tool(tool("nh_assign"))),
        conflict(register_global_tool(tool(global))),
    ];
    assert_eq!(
        outcomes,
        [Some(ToolOrigin::BuiltIn), Some(ToolOrigin::Global)]
    );

    // Inside an environment, its tools are visible; inside a call, the
    // call's are.
    let env = stub([]);
    env.register_tool(tool("conflicts_env_only")).unwrap();
    let in_env = environment(env.clone(), async {
        conflict(register_global_tool(tool("conflicts_env_only")))
    })
    .await;
    assert_eq!(in_env, Some(ToolOrigin::Environment));
    let in_call = environment(
        env.clone(),
        registers_globally("conflicts_call_only".into()),
    )
    .await
    .unwrap();
    assert_eq!(in_call, [call("registers_globally")]);

    // Outside that environment its tools are not visible: no conflict, and
    // inside it the environment's tool shadows the global one.
    assert_eq!(
        conflict(register_global_tool(tool("conflicts_env_only"))),
        None
    );
    assert!(remove_global_tool("conflicts_env_only"));
    assert!(
        register_global_tool(tool(global).overwrite(true)).is_ok(),
        "overwrite replaces a global tool"
    );
    assert!(remove_global_tool(global));
}

#[tokio::test]
async fn register_tool_outside_a_call_goes_to_the_environment_and_checks_it() {
    let env = stub([]);
    env.register_tool(tool("env_first")).unwrap();
    let outcomes = environment(env, async {
        (
            register_tool(tool("env_second")).map_err(|e| e.to_string()),
            conflict(register_tool(tool("env_first"))),
        )
    })
    .await;
    assert_eq!(
        outcomes,
        (Ok(ToolScope::Environment), Some(ToolOrigin::Environment))
    );
}

#[tokio::test]
async fn a_conflict_says_where_the_existing_tool_lives() {
    let err = environment(stub([]), outer_dup()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool `dup` conflicts with the call-scoped tool (natural call `outer_dup`) of the same name; register it with overwrite = true to replace it"
    );
    let err = stub([]).register_tool(tool("nh_eval")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool `nh_eval` conflicts with the built-in tool of the same name; register it with overwrite = true to replace it"
    );
}

#[natural]
async fn outer_dup() -> north_natural::Result<()> {
    register_tool(tool("dup"))?;
    inner_dup().await
}

#[natural]
async fn inner_dup() -> north_natural::Result<()> {
    register_tool(tool("dup"))?;
    Ok(())
}
