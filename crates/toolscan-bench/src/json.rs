//! The JSON document of `--json FILE`, written and read back (for
//! `--compare-json`): `{"toolscan_bench": 1, "runs": [RUN, …]}`, its
//! fields described in the crate's documentation.

use serde::{Deserialize, Serialize};

use crate::error::SetupError;
use crate::report::Run;
use crate::stats::Summary;

/// The version of the document's shape.
pub const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Document {
    toolscan_bench: u32,
    runs: Vec<Run>,
}

/// The document of `runs`, pretty-printed, ending in a newline.
pub fn to_string(runs: &[Run]) -> String {
    let doc = Document {
        toolscan_bench: VERSION,
        runs: runs.to_vec(),
    };
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// The runs of a document; each summary is computed again from its
/// requests. `origin` names the input in errors.
pub fn from_str(text: &str, origin: &str) -> Result<Vec<Run>, SetupError> {
    let doc: Document = serde_json::from_str(text)
        .map_err(|e| SetupError(format!("{origin}: not a toolscan bench JSON document: {e}")))?;
    if doc.toolscan_bench > VERSION {
        return Err(SetupError(format!(
            "{origin}: a document of version {} (this build reads up to {VERSION})",
            doc.toolscan_bench
        )));
    }
    if doc.runs.is_empty() {
        return Err(SetupError(format!("{origin}: the document holds no run")));
    }
    Ok(doc
        .runs
        .into_iter()
        .map(|mut r| {
            r.summary = Summary::of(&r.requests, r.duration_s);
            r
        })
        .collect())
}
