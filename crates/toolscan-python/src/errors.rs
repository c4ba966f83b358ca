//! The exceptions: `ToolscanError` and its subclasses.

use pyo3::create_exception;
use pyo3::exceptions::PyException;

create_exception!(
    toolscan,
    ToolscanError,
    PyException,
    "The base of every error toolscan raises."
);
create_exception!(
    toolscan,
    UnknownFormatError,
    ToolscanError,
    "No format of that name (`toolscan.formats()` lists the known ones)."
);
create_exception!(
    toolscan,
    OptionsError,
    ToolscanError,
    "An option's value is not one it takes, or the tools are not an OpenAI `tools` array."
);
create_exception!(
    toolscan,
    FinishedError,
    ToolscanError,
    "The parser was fed after `finish()`."
);
