//! Mistral: `[TOOL_CALLS]` with a JSON list (v0.3) or `NAME[ARGS]{…}` calls (v11).

use crate::catalogue::shorthand::{capture, json, label};
use crate::lang::format::{CallKeys, Field, Format, Opener, Shape, Step};
fn mistral_programs() -> (Opener, Opener) {
    let keys = CallKeys::new(&["name"], &["arguments"]).with_id("id");
    let array = Opener::definite(
        "[TOOL_CALLS]",
        vec![
            Step::Ws,
            json(Shape::CallList, keys, false),
            Step::Dispatch,
            Step::End,
        ],
    );
    // Some servers drop `[ARGS]`: `[TOOL_CALLS]NAME{json}` — the object
    // then ends the name (or the id).
    let before_object = |step: Step| match step {
        Step::Capture(mut c) => {
            c.stop = b"{".to_vec();
            Step::Capture(c)
        }
        other => other,
    };
    let compact = Opener::definite(
        "[TOOL_CALLS]",
        vec![
            before_object(capture(
                Field::Name,
                &[("[CALL_ID]", Some("id")), ("[ARGS]", Some("args"))],
            )),
            Step::goto("args"),
            label("id"),
            before_object(capture(Field::Id, &[("[ARGS]", None)])),
            label("args"),
            Step::args(),
            Step::Dispatch,
            Step::End,
        ],
    );
    (array, compact)
}

pub(super) fn mistral() -> Format {
    let (array, compact) = mistral_programs();
    Format::new(
        "mistral",
        "Mistral v3, Nemo, Mixtral, Codestral",
        "[TOOL_CALLS] [{\"name\", \"arguments\", \"id\"}, ...] (also reads the v11 form)",
    )
    .opener(array)
    .opener(compact)
}

pub(super) fn mistral_v11() -> Format {
    let (array, compact) = mistral_programs();
    Format::new(
        "mistral-v11",
        "Mistral Small 3.2+, Magistral, Devstral",
        "[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{json} / [TOOL_CALLS]NAME[ARGS]{json} / \
         [TOOL_CALLS]NAME{json}, no end marker (also reads the array form)",
    )
    .opener(compact)
    .opener(array)
}
