//! `toolscan manifest`: the system-prompt section that tells a model its
//! tools in a format (`Format::manifest`), alone or placed in a template
//! at `{{tools}}`.

use std::io::{self, Write};

use serde_json::json;

use crate::args::{ManifestArgs, ManifestOutput};
use crate::failure::Failure;
use crate::setup::{format_named, read_tools, registry_with};

pub fn run(args: ManifestArgs) -> Result<(), Failure> {
    let (registry, _) = registry_with(args.format_file.as_deref())?;
    let name = args.format.as_str();
    let format = format_named(&registry, name)?;
    let tools = read_tools(&args.tools)?;
    let template = args
        .template
        .as_deref()
        .map(|p| {
            std::fs::read_to_string(p)
                .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", p.display())))
        })
        .transpose()?;
    let manifest = format
        .manifest(&tools)
        .map_err(|e| Failure::Failed(format!("no manifest in `{name}`: {e}")))?;
    let text = match &template {
        Some(t) => manifest.fill(t),
        None => manifest.text.clone(),
    };
    let out = match args.output {
        ManifestOutput::Text => text,
        ManifestOutput::Json => {
            let mut s = json!({"text": text, "examples": manifest.examples}).to_string();
            s.push('\n');
            s
        }
    };
    let stdout = io::stdout();
    let mut w = stdout.lock();
    w.write_all(out.as_bytes())
        .and_then(|()| w.flush())
        .map_err(Failure::Output)
}
