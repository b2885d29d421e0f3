//! The log's own tests: appends, torn lines, the lock, condensation and
//! reading an earlier view back.
#![allow(clippy::unwrap_used)]

use super::*;

fn model() -> ModelRef {
    ModelRef {
        provider: "scripted".into(),
        model: "m".into(),
    }
}

#[test]
fn appends_only_what_changed_and_replays_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, replayed) = SessionLog::open(dir.path(), Redactor::default()).unwrap();
    assert!(!replayed.found);
    let mut messages = vec![Message::user("one")];
    let state = State::default();
    log.sync(1, &messages, 0, &state, &model()).unwrap();
    let first = std::fs::metadata(dir.path().join(LOG_FILE)).unwrap().len();
    messages.push(Message::user("two"));
    log.sync(2, &messages, 1, &state, &model()).unwrap();
    let grown = std::fs::metadata(dir.path().join(LOG_FILE)).unwrap().len() - first;
    assert!(
        grown < first,
        "the second sync appends one message, not two"
    );
    // The last message changes in place (a result added to it).
    messages[1] = Message::user("two, amended");
    log.sync(3, &messages, 1, &state, &model()).unwrap();
    drop(log);
    let back = replay(&dir.path().join(LOG_FILE), false).unwrap();
    assert_eq!(back.messages, messages);
    assert_eq!(back.revision, 3);
    assert_eq!(back.model, Some(model()));
}

#[test]
fn a_torn_last_line_is_dropped_and_a_torn_middle_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(LOG_FILE);
    {
        let (mut log, _) = SessionLog::open(dir.path(), Redactor::default()).unwrap();
        log.sync(1, &[Message::user("kept")], 0, &State::default(), &model())
            .unwrap();
    }
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(br#"{"op":"sync","rev":2,"keep":1,"messa"#)
        .unwrap();
    drop(f);
    let (_log, back) = SessionLog::open(dir.path(), Redactor::default()).unwrap();
    assert_eq!(back.messages, [Message::user("kept")]);
    assert!(back.dropped_torn_bytes > 0);
    drop(_log);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'), "the torn tail was cut: {text}");
    std::fs::write(&path, format!("{{bad\n{text}")).unwrap();
    assert!(matches!(
        SessionLog::open(dir.path(), Redactor::default()),
        Err(StoreError::Parse { .. })
    ));
}

#[test]
fn one_writer_per_session_and_stale_temps_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".checkpoint.json.north-123-0.tmp"), "x").unwrap();
    let (log, _) = SessionLog::open(dir.path(), Redactor::default()).unwrap();
    assert!(!dir.path().join(".checkpoint.json.north-123-0.tmp").exists());
    assert!(matches!(
        SessionLog::open(dir.path(), Redactor::default()),
        Err(StoreError::Busy(_))
    ));
    drop(log);
    assert!(SessionLog::open(dir.path(), Redactor::default()).is_ok());
}

#[test]
fn condensing_keeps_the_transcript_and_an_earlier_view_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(LOG_FILE);
    let (mut log, _) = SessionLog::open(dir.path(), Redactor::default()).unwrap();
    let state = State::default();
    let mut view: Vec<Message> = (0..4).map(|i| Message::user(format!("m{i}"))).collect();
    log.sync(1, &view, 0, &state, &model()).unwrap();
    let before = log.offset();
    let written = std::fs::read(&path).unwrap();
    // The first three messages are condensed; a note opens the view.
    let note = Message::user("[Earlier messages were condensed]");
    log.condensed(2, 3, Some(&note)).unwrap();
    view.drain(..3);
    view.insert(0, note.clone());
    view.push(Message::user("m4"));
    log.sync(3, &view, 2, &state, &model()).unwrap();
    let now = std::fs::read(&path).unwrap();
    assert!(
        now.starts_with(&written),
        "the log is only ever appended to"
    );
    assert!(
        now.len() - written.len() < written.len(),
        "condensing appends a record, not the kept history"
    );
    let back = replay(&path, false).unwrap();
    assert_eq!(back.messages, view);
    assert!(back.lead);
    let texts = |m: &[Message]| m.iter().map(Message::text_content).collect::<Vec<_>>();
    assert_eq!(texts(&back.earlier), ["m0", "m1", "m2"]);
    // The view before the condensation, read back and restored.
    let past = replay_prefix(&path, before).unwrap();
    assert_eq!(texts(&past.messages), ["m0", "m1", "m2", "m3"]);
    log.restored(4, &past).unwrap();
    drop(log);
    let back = replay(&path, false).unwrap();
    assert_eq!(texts(&back.messages), ["m0", "m1", "m2", "m3"]);
    assert!(back.earlier.is_empty() && !back.lead);
}
