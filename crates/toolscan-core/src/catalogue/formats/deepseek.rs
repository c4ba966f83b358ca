//! DeepSeek V3 and V3.1: a section of calls, each a name and JSON arguments between full-width markers.

use crate::catalogue::shorthand::{capture, fork, label, lit, opt, prefer, then, writes};
use crate::lang::format::{Field, Format, Hint, Label, Lit, Opener, Step};
/// `v3`: rendered as V3 writes a call (`function<｜tool▁sep｜>NAME\n```json\n{…}\n```…`),
/// else as V3.1 does (`NAME<｜tool▁sep｜>{…}…`); both read both.
pub(super) fn deepseek(name: &str, models: &str, description: &str, v3: bool) -> Format {
    // Rendering hints: which of the spellings the program reads this
    // format writes.
    let h = |v3_hint: Step, v31_hint: Option<Step>| -> Vec<Step> {
        if v3 {
            vec![v3_hint]
        } else {
            v31_hint.into_iter().collect()
        }
    };
    const CALL_BEGIN: &str = "<｜tool▁call▁begin｜>";
    const CALL_END: &str = "<｜tool▁call▁end｜>";
    const SEP: &str = "<｜tool▁sep｜>";
    const CALLS_END: &str = "<｜tool▁calls▁end｜>";
    const EOS: &str = "<｜end▁of▁sentence｜>";
    // DeepSeek-R1 distills open the section with `<｜tool▁calls｜>`.
    const SECTIONS: [&str; 2] = ["<｜tool▁calls▁begin｜>", "<｜tool▁calls｜>"];
    // V3 writes `function<｜tool▁sep｜>NAME\n` + fenced JSON, V3.1
    // `NAME<｜tool▁sep｜>{json}`: one program reads both — the word before
    // the separator is the name unless a name follows it.
    //
    // A call that fails does not end the section: its bytes are text, and
    // reading goes on at the next call, or at the end of the failed call or
    // of the section (which still belongs to the calls that completed), or
    // at a new section.
    //
    // R1 distills may leave out the first `<｜tool▁call▁begin｜>`:
    // `<｜tool▁calls｜>function<｜tool▁sep｜>NAME…` (a name never begins
    // with `<`).
    let program = [
        vec![
            label("section"),
            Step::Ws,
            Step::OptLit(Lit::new(CALL_BEGIN)),
            Step::Recover(vec![
                (Lit::new(CALL_END), Label::from("next")),
                (Lit::new(CALL_BEGIN), Label::from("call")),
                (Lit::new(CALLS_END), Label::from("after-section")),
                (Lit::new(SECTIONS[0]), Label::from("section")),
                (Lit::new(SECTIONS[1]), Label::from("section")),
            ]),
            label("call"),
        ],
        h(writes("function"), None),
        vec![capture(Field::Name, &[(SEP, None)]), Step::Ws],
        h(prefer("v3-name"), None),
        vec![
            fork(&[(b"{", "args"), (b"`", "fence"), (b"", "v3-name")]),
            label("v3-name"),
            capture(Field::Name, &[("\n", None)]),
            Step::Ws,
            label("fence"),
            Step::OptLit(Lit::new("```")),
        ],
        h(writes("json"), None),
        vec![Step::Word],
        h(writes("\n"), None),
        vec![Step::Ws, label("args"), Step::args()],
        h(writes("\n"), None),
        vec![Step::Ws],
        h(Step::Render(Default::default()), Some(writes(""))),
        vec![
            opt("```"),
            Step::Ws,
            lit(CALL_END),
            Step::Dispatch,
            label("next"),
        ],
        // After the last call the section's end; between two calls V3's
        // templates write a newline (R1's, the distills').
        h(
            Step::Render(Hint {
                sep: Some(format!("\n{CALL_BEGIN}")),
                ..Hint::write(CALLS_END)
            }),
            Some(writes(CALLS_END)),
        ),
        vec![
            then(&[
                (CALL_BEGIN, "call"),
                (CALLS_END, "after-section"),
                (EOS, "end"),
            ]),
            label("after-section"),
            then(&[(EOS, "end")]),
            label("end"),
            Step::End,
        ],
    ]
    .concat();
    Format::new(name, models, description)
        .opener(Opener::definite(SECTIONS[0], program.clone()))
        .opener(Opener::definite(SECTIONS[1], program))
}
