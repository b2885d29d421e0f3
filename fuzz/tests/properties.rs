//! Every fuzz target under proptest: a few hundred random inputs each (and
//! inputs shaped like the real thing), in the ordinary suite. No panics.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;

fn sse_like() -> impl Strategy<Value = Vec<u8>> {
    let event = prop_oneof![
        Just("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"x\",\"usage\":{\"input_tokens\":1}}}\n\n".to_string()),
        Just("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n".to_string()),
        Just("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n".to_string()),
        Just("data: [DONE]\n\n".to_string()),
        Just("\r\n".to_string()),
        ".{0,40}".prop_map(|s| format!("data: {s}\n\n")),
    ];
    (any::<u8>(), prop::collection::vec(event, 0..12)).prop_map(|(seed, events)| {
        let mut out = vec![seed];
        out.extend(events.concat().into_bytes());
        out
    })
}

fn blocks_like() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just("<<<NOTES_JSON>>>".to_string()),
        Just("<<<END_NOTES_JSON>>>".to_string()),
        Just("<<<TOOL_CALLS_JSON>>>".to_string()),
        Just("<<<END_TOOL_CALLS_JSON>>>".to_string()),
        Just("{\"set_goals\":[\"g\"],\"actions\":[\"condense_now\"]}".to_string()),
        Just("[{\"id\":\"t1\",\"tool\":\"read_file\",\"args\":{\"path\":\"a\"}}]".to_string()),
        ".{0,20}",
    ];
    prop::collection::vec(piece, 0..10).prop_map(|p| p.concat().into_bytes())
}

fn command_like() -> impl Strategy<Value = Vec<u8>> {
    let word = prop_oneof![
        Just("cat".to_string()),
        Just("ls".to_string()),
        Just("cd".to_string()),
        Just("../x".to_string()),
        Just("~".to_string()),
        Just("*".to_string()),
        Just("'q u'".to_string()),
        Just("\"$HOME\"".to_string()),
        Just(";".to_string()),
        Just("&&".to_string()),
        Just("|".to_string()),
        Just(">".to_string()),
        "[ -~]{0,6}",
    ];
    prop::collection::vec(word, 0..8).prop_map(|w| w.join(" ").into_bytes())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn sse_decoding_never_panics_and_ignores_chunk_boundaries(data in prop_oneof![sse_like(), prop::collection::vec(any::<u8>(), 0..300)]) {
        north_fuzz::sse_decode(&data);
    }

    #[test]
    fn notes_blocks_never_panic_and_never_show_hidden_text(data in prop_oneof![blocks_like(), prop::collection::vec(any::<u8>(), 0..300)]) {
        north_fuzz::notes_block(&data);
    }

    #[test]
    fn tool_call_blocks_never_panic(data in prop_oneof![blocks_like(), prop::collection::vec(any::<u8>(), 0..300)]) {
        north_fuzz::tool_calls_block(&data);
    }

    #[test]
    fn the_command_policy_never_panics(data in prop_oneof![command_like(), prop::collection::vec(any::<u8>(), 0..120)]) {
        north_fuzz::command_policy(&data);
    }

    #[test]
    fn structured_output_never_panics(data in prop_oneof![
        Just(br#"{"items": [{"description": "a", "tool": null}]}"#.to_vec()),
        "[ -~]{0,120}".prop_map(|s| format!("```json\n{{\"items\": [{s}]}}\n```").into_bytes()),
        prop::collection::vec(any::<u8>(), 0..200),
    ]) {
        north_fuzz::structured_output(&data);
    }

    #[test]
    fn config_files_never_panic(data in prop_oneof![
        "[ -~]{0,80}".prop_map(|s| format!("{{\"model\": \"{s}\"}}").into_bytes()),
        Just(br#"{"api_key": "sk-x"}"#.to_vec()),
        prop::collection::vec(any::<u8>(), 0..200),
    ]) {
        north_fuzz::config_file(&data);
    }
}
