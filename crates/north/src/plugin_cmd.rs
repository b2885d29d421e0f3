//! `north plugin …`: Claude Code plugins and marketplaces installed into
//! North's data dir, each shown — what it adds and will run — and asked
//! for before its files are installed; an update shows what changes and
//! asks again. Switched on or off for you, or for one trusted project.

use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use clap::{Args, Subcommand};
use north_plugin::{Request, Staged, Store};

/// `north plugin` options.
#[derive(Debug, Args)]
#[command(
    after_help = "SOURCES:\n  https://host/owner/repo.git, git@host:owner/repo.git   a git repository\n  owner/repo                                               on the default forge (NORTH_PLUGIN_FORGE)\n  ./folder, /path/to/folder                                a folder (a git repository: its last commit, not uncommitted edits)\n  NAME@MARKETPLACE                                         a plugin a marketplace lists (north plugin marketplace add)\n  Add @REV (a branch, tag or commit) to a git source to pin it.\n\nNothing of a plugin runs before you have seen it: `install` and `update` show its commands,\nagents, skills, hooks (with their commands) and MCP servers (with their command lines) and ask.\nWithout a terminal they ask nothing and install nothing unless --yes is given."
)]
pub struct PluginArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: PluginCommand,
}

/// `north plugin` subcommands.
#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Fetch a plugin, show what it adds and runs, and install it when you say yes.
    Install {
        /// SOURCE[@REV]: a git URL, OWNER/REPO, a folder, or NAME@MARKETPLACE.
        source: String,
        /// Install without asking (after reading what it shows).
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Fetch an installed plugin again, show what changes, and update it when you say yes.
    Update {
        /// The plugin.
        name: String,
        /// A branch, tag or commit to move to [default: the one it was installed from].
        #[arg(long, value_name = "REV")]
        rev: Option<String>,
        /// Update without asking.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Remove an installed plugin and its files.
    Remove {
        /// The plugin.
        name: String,
    },
    /// Installed plugins: on or off, version, where from, pinned commit.
    List {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// What an installed plugin adds and runs.
    Show {
        /// The plugin.
        name: String,
    },
    /// Switch a plugin on (for you, or with --project for this trusted project).
    Enable(Switch),
    /// Switch a plugin off (for you, or with --project for this project).
    Disable(Switch),
    /// Marketplaces: listings of plugins (adding one runs nothing).
    #[command(subcommand)]
    Marketplace(MarketplaceCommand),
}

/// `enable` and `disable`.
#[derive(Debug, Args)]
pub struct Switch {
    /// The plugin (NAME or NAME@MARKETPLACE).
    pub name: String,
    /// In this project's `.north/project.json` (`enabledPlugins`), which
    /// applies while the project is trusted.
    #[arg(long)]
    pub project: bool,
    /// Project directory [default: the git root above the current directory].
    #[arg(long, value_name = "DIR")]
    pub path: Option<std::path::PathBuf>,
}

/// `north plugin marketplace` subcommands.
#[derive(Debug, Subcommand)]
pub enum MarketplaceCommand {
    /// Add a marketplace (a repository or folder with .claude-plugin/marketplace.json).
    Add {
        /// SOURCE[@REV].
        source: String,
    },
    /// The marketplaces added, and what each lists.
    List,
    /// Fetch a marketplace's listing again.
    Update {
        /// The marketplace.
        name: String,
    },
    /// Remove a marketplace (plugins installed from it stay).
    Remove {
        /// The marketplace.
        name: String,
    },
}

/// Runs `north plugin`.
pub fn main(args: PluginArgs) -> anyhow::Result<ExitCode> {
    let mut store = Store::user()?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    match args.command {
        PluginCommand::Install { source, yes } => {
            eprintln!("fetching {source} …");
            let (staged, review) = stage_install(&store, &source, &cwd)?;
            decide(&mut store, staged, &review, yes, "Install")
        }
        PluginCommand::Update { name, rev, yes } => {
            eprintln!("fetching {name} again …");
            match stage_update(&mut store, &name, rev)? {
                Ok((staged, review)) => decide(&mut store, staged, &review, yes, "Update"),
                Err(same) => {
                    println!("{same}");
                    Ok(ExitCode::SUCCESS)
                }
            }
        }
        PluginCommand::Remove { name } => {
            let gone = store.remove(&name)?;
            println!("removed plugin {} and its files", gone.name);
            Ok(ExitCode::SUCCESS)
        }
        PluginCommand::List { json } => list(&store, json),
        PluginCommand::Show { name } => {
            print!("{}", show(&store, &name)?);
            Ok(ExitCode::SUCCESS)
        }
        PluginCommand::Enable(s) => switch(&mut store, &s, true, &cwd),
        PluginCommand::Disable(s) => switch(&mut store, &s, false, &cwd),
        PluginCommand::Marketplace(cmd) => marketplace(&mut store, cmd, &cwd),
    }
}

/// The installed plugins a line each, for `/plugin`: on here or off, and
/// what each that is on adds.
pub fn described(active: &north_plugin::Active) -> Vec<String> {
    active
        .installed
        .iter()
        .map(|p| match active.plugins.iter().find(|a| a.name == p.name) {
            Some(a) => format!(
                "{} — on, {}: {} command(s), {} agent(s), {} skill(s), {} hook(s), {} MCP server(s)",
                p.key(),
                p.pin(),
                a.parts.commands.len(),
                a.parts.agents.defs().len(),
                a.parts.skills.skills().len(),
                a.parts.hooks.defs().len(),
                a.parts.servers.len()
            ),
            None => format!("{} — off here, {}", p.key(), p.pin()),
        })
        .collect()
}

/// Fetches the plugin `source` names and reads what it adds and runs.
fn stage_install(store: &Store, source: &str, cwd: &Path) -> anyhow::Result<(Staged, String)> {
    let req = Request::parse(source, cwd, store.forge())?;
    let staged = store.stage(&req)?;
    let review = north_plugin::review::install(&staged.dir(), &staged.manifest, &staged.record);
    Ok((staged, review))
}

/// Fetches installed plugin `name` again and reads what changes; `Err`
/// inside: it is up to date, said in a line.
fn stage_update(
    store: &mut Store,
    name: &str,
    rev: Option<String>,
) -> anyhow::Result<Result<(Staged, String), String>> {
    let staged = store.stage_update(name, rev)?;
    if staged.unchanged() {
        return Ok(Err(format!(
            "plugin {name} is up to date ({})",
            staged.record.pin()
        )));
    }
    let Some(previous) = staged.previous.clone() else {
        anyhow::bail!("plugin {name} has no installed version to compare with");
    };
    let review = match store.installed(&previous) {
        Ok((old_dir, old)) => north_plugin::review::update(
            &old_dir,
            &old,
            &staged.dir(),
            &staged.manifest,
            &staged.record,
            &previous,
        ),
        // The installed copy is not what was reviewed: nothing to set the
        // new one against, so all of it is shown.
        Err(north_plugin::PluginError::Tampered(_)) => format!(
            "The installed copy of {name} changed on disk since its review; this is all of the new one:\n{}",
            north_plugin::review::install(&staged.dir(), &staged.manifest, &staged.record)
        ),
        Err(e) => return Err(e.into()),
    };
    Ok(Ok((staged, review)))
}

/// What installed plugin `name` adds and runs.
fn show(store: &Store, name: &str) -> anyhow::Result<String> {
    let p = store
        .registry
        .plugin(name)
        .cloned()
        .ok_or_else(|| north_plugin::PluginError::NotInstalled(name.to_string()))?;
    let (dir, manifest) = store.installed(&p)?;
    Ok(north_plugin::review::install(&dir, &manifest, &p))
}

/// What `/plugin VERB …` runs in the assistant: the same operations as
/// `north plugin`, with the review shown in the transcript and the
/// fetched plugin kept until `/plugin accept` (or `reject`).
pub fn tui_manager(cwd: std::path::PathBuf) -> north_tui::PluginManager {
    let pending: Arc<Mutex<Option<Staged>>> = Arc::new(Mutex::new(None));
    north_tui::PluginManager::new(Arc::new(move |words: Vec<String>| {
        let pending = pending.clone();
        let cwd = cwd.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || tui_verb(&words, &cwd, &pending))
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("/plugin: {e:#}"))
        }) as futures::future::BoxFuture<'static, Result<(String, Vec<String>), String>>
    }))
}

/// What `/plugin install` and `/plugin update` end with.
const TUI_ASK: &str =
    "Type /plugin accept to install it (it loads in your next session), or /plugin reject.";

/// One `/plugin` verb: a title and the lines to show.
fn tui_verb(
    words: &[String],
    cwd: &Path,
    pending: &Mutex<Option<Staged>>,
) -> anyhow::Result<(String, Vec<String>)> {
    let mut store = Store::user()?;
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["install", _] | ["update", _] | ["accept"] | ["reject"] => {
            tui_review(&mut store, &words, cwd, pending)
        }
        _ => tui_manage(&mut store, &words, cwd),
    }
}

/// `/plugin install|update`: fetched and shown, kept until `accept` or
/// `reject`.
fn tui_review(
    store: &mut Store,
    words: &[&str],
    cwd: &Path,
    pending: &Mutex<Option<Staged>>,
) -> anyhow::Result<(String, Vec<String>)> {
    let keep = |staged: Staged, review: &str, what: &str| {
        let title = format!("Plugin {} · {what}not installed yet", staged.record.name);
        if let Ok(mut slot) = pending.lock() {
            *slot = Some(staged);
        }
        let mut shown: Vec<String> = review.lines().map(str::to_string).collect();
        shown.push(TUI_ASK.into());
        (title, shown)
    };
    Ok(match words {
        ["install", source] => {
            let (staged, review) = stage_install(store, source, cwd)?;
            keep(staged, &review, "")
        }
        ["update", name] => match stage_update(store, name, None)? {
            Ok((staged, review)) => keep(staged, &review, "update "),
            Err(same) => (same, Vec::new()),
        },
        ["accept"] => {
            let staged = pending
                .lock()
                .ok()
                .and_then(|mut slot| slot.take())
                .context("nothing to accept: /plugin install SOURCE (or update NAME) first")?;
            let record = store.accept(staged)?;
            let title = format!(
                "Plugin {} installed ({}) · loads in your next session",
                record.name,
                record.pin()
            );
            (title, Vec::new())
        }
        ["reject"] => match pending.lock().ok().and_then(|mut slot| slot.take()) {
            Some(s) => (
                format!("Plugin {} not installed; its files are gone", s.record.name),
                Vec::new(),
            ),
            None => ("Nothing was waiting".into(), Vec::new()),
        },
        _ => anyhow::bail!("/plugin {}: not a review verb", words.join(" ")),
    })
}

/// `/plugin show|enable|disable|remove|marketplace …`.
fn tui_manage(
    store: &mut Store,
    words: &[&str],
    cwd: &Path,
) -> anyhow::Result<(String, Vec<String>)> {
    Ok(match words {
        ["show", name] => (
            format!("Plugin {name}"),
            show(store, name)?.lines().map(str::to_string).collect(),
        ),
        [verb @ ("enable" | "disable"), name] => {
            let p = store.set_enabled(name, *verb == "enable")?;
            let word = if p.enabled { "on" } else { "off" };
            let title = format!(
                "Plugin {} is {word} for you · from your next session",
                p.name
            );
            (title, Vec::new())
        }
        ["remove", name] => {
            let gone = store.remove(name)?;
            (
                format!("Plugin {} removed with its files", gone.name),
                Vec::new(),
            )
        }
        ["marketplace", "add", source] => {
            let req = Request::parse(source, cwd, store.forge())?;
            let listing = store.add_marketplace(&req)?;
            (
                format!("Marketplace {} added", listing.name),
                listing_lines(&listing),
            )
        }
        ["marketplace", "list"] | ["marketplaces"] => {
            let mut shown = Vec::new();
            for m in store.registry.marketplaces.clone() {
                shown.push(format!("{} from {}", m.name, m.origin));
                match store.listing(&m.name) {
                    Ok(listing) => shown.extend(listing_lines(&listing)),
                    Err(e) => shown.push(format!("  {e}")),
                }
            }
            let title = format!("Marketplaces · {}", store.registry.marketplaces.len());
            (title, shown)
        }
        _ => anyhow::bail!(
            "unknown: /plugin {} — try install SOURCE, update NAME, accept, reject, show NAME, enable NAME, disable NAME, remove NAME, marketplace add SOURCE, marketplace list",
            words.join(" ")
        ),
    })
}

/// A marketplace's plugins, a line each, and what it lists that North
/// does not take.
fn listing_lines(listing: &north_plugin::Listing) -> Vec<String> {
    let mut out: Vec<String> = listing
        .entries
        .iter()
        .map(|e| format!("  {}@{} — {}", e.name, listing.name, e.description))
        .collect();
    out.extend(
        listing
            .problems
            .iter()
            .map(|p| format!("  not listed: {p}")),
    );
    // A listing's words are the marketplace's: no escape reaches the
    // terminal.
    out.iter()
        .map(|line| north_plugin::review::printable(line))
        .collect()
}

/// Shows `review` and installs `staged` when the user says yes.
fn decide(
    store: &mut Store,
    staged: Staged,
    review: &str,
    yes: bool,
    verb: &str,
) -> anyhow::Result<ExitCode> {
    print!("{review}");
    let name = staged.record.name.clone();
    let asked = format!("{verb} plugin {name}? [y/N] ");
    if !yes && !crate::mcp_import::confirm(&asked)? {
        eprintln!(
            "north: plugin {name} was not {}: nothing of it was installed or run{}",
            if verb == "Install" {
                "installed"
            } else {
                "updated (the installed version stays)"
            },
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                ""
            } else {
                " (no terminal to ask on: read the above, then run again with --yes)"
            }
        );
        return Ok(ExitCode::from(1));
    }
    let record = store.accept(staged)?;
    println!(
        "{} plugin {} ({}); it loads in your next session{}",
        if verb == "Install" {
            "installed"
        } else {
            "updated"
        },
        record.name,
        record.pin(),
        if record.enabled { "" } else { " once enabled" }
    );
    Ok(ExitCode::SUCCESS)
}

fn list(store: &Store, json: bool) -> anyhow::Result<ExitCode> {
    if store.registry.plugins.is_empty() && !json {
        println!(
            "no plugins installed; `north plugin install SOURCE` fetches one and shows it before installing"
        );
    }
    for p in &store.registry.plugins {
        let intact = store.verified(p).is_ok();
        if json {
            let mut v = serde_json::to_value(p)?;
            v["intact"] = serde_json::Value::Bool(intact);
            v["dir"] = serde_json::Value::String(store.plugin_dir(p).display().to_string());
            println!("{v}");
            continue;
        }
        println!(
            "{:<32} {:<4} {:<10} {} from {}{}",
            p.key(),
            if p.enabled { "on" } else { "off" },
            north_plugin::review::printable(p.version.as_deref().unwrap_or("-")),
            p.pin(),
            p.origin,
            if intact {
                ""
            } else {
                "  CHANGED since review: not loaded"
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn switch(store: &mut Store, s: &Switch, on: bool, cwd: &Path) -> anyhow::Result<ExitCode> {
    let p = store
        .registry
        .plugin(&s.name)
        .cloned()
        .ok_or_else(|| north_plugin::PluginError::NotInstalled(s.name.clone()))?;
    let word = if on { "on" } else { "off" };
    if !s.project {
        store.set_enabled(&s.name, on)?;
        println!(
            "plugin {} is {word} for you (a trusted project's enabledPlugins may say otherwise)",
            p.name
        );
        return Ok(ExitCode::SUCCESS);
    }
    let root = north_tools::repo::resolve_root(s.path.as_deref(), cwd)?;
    let file = root.join(".north/project.json");
    let mut doc = match north_config::read_settings(&file)
        .with_context(|| format!("cannot read {}", file.display()))?
    {
        Some(text) if !text.trim().is_empty() => {
            serde_json::from_str::<serde_json::Value>(&text)
                .with_context(|| format!("{} is not valid JSON", file.display()))?
        }
        _ => serde_json::json!({}),
    };
    let Some(map) = doc.as_object_mut() else {
        anyhow::bail!("{} is not a JSON object", file.display());
    };
    let plugins = map
        .entry("enabledPlugins")
        .or_insert_with(|| serde_json::json!({}));
    let Some(plugins) = plugins.as_object_mut() else {
        anyhow::bail!("`enabledPlugins` in {} is not an object", file.display());
    };
    plugins.insert(p.key(), serde_json::Value::Bool(on));
    let (before, trust) = north_runtime::trust_state(&root);
    std::fs::create_dir_all(root.join(".north")).context("cannot create .north")?;
    let text = serde_json::to_string_pretty(&doc)? + "\n";
    north_tools::repo::atomic_write(&file, text.as_bytes())?;
    crate::mcp_cmd::keep_trust(&root, before, trust, ".north/project.json");
    println!(
        "plugin {} is {word} in {} (applies while the project is trusted)",
        p.name,
        root.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn marketplace(store: &mut Store, cmd: MarketplaceCommand, cwd: &Path) -> anyhow::Result<ExitCode> {
    let show = |listing: &north_plugin::Listing| {
        for line in listing_lines(listing) {
            println!("{line}");
        }
    };
    match cmd {
        MarketplaceCommand::Add { source } => {
            let req = Request::parse(&source, cwd, store.forge())?;
            let listing = store.add_marketplace(&req)?;
            println!(
                "added marketplace {} ({} plugins); `north plugin install NAME@{}` shows one and asks:",
                listing.name,
                listing.entries.len(),
                listing.name
            );
            show(&listing);
        }
        MarketplaceCommand::List => {
            if store.registry.marketplaces.is_empty() {
                println!("no marketplaces; `north plugin marketplace add SOURCE` adds one");
            }
            for m in store.registry.marketplaces.clone() {
                println!("{} from {}", m.name, m.origin);
                match store.listing(&m.name) {
                    Ok(listing) => show(&listing),
                    Err(e) => println!("  {e}"),
                }
            }
        }
        MarketplaceCommand::Update { name } => {
            let listing = store.update_marketplace(&name)?;
            println!("updated marketplace {name}:");
            show(&listing);
        }
        MarketplaceCommand::Remove { name } => {
            store.remove_marketplace(&name)?;
            println!(
                "removed marketplace {name} (plugins installed from it stay; `north plugin remove` removes one)"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
