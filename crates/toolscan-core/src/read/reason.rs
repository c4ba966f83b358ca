//! Why a block is not a call: a small `Copy` enum, turned into words only
//! when a diagnostic is emitted (a silent failure — prose `{` under a bare
//! JSON format — formats nothing).

use crate::lang::format::Lit;

/// Why a block (or the JSON value in it) stopped being a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reason {
    // The block's program.
    NoProgress,
    ExpectedLit {
        found: u8,
    },
    Unexpected {
        found: u8,
    },
    TooLong {
        limit: usize,
        confirmed: bool,
    },
    // Names and ids.
    EmptyName,
    NameTooLong {
        limit: usize,
    },
    LongWord,
    NameByte {
        found: u8,
    },
    NameSpace,
    /// The name ends with `/`: a self-closing tag (`<function=NAME/>`).
    SelfClosing,
    NameNotUtf8,
    NameNotString,
    BadNameString,
    NotATool,
    TooManyCalls {
        limit: usize,
    },
    NotTheTool,
    /// The call does not fit its tool's schema (`Check::Reject`); the
    /// check's own diagnostics say how.
    FailsSchema,
    TwoNames,
    NoName,
    BadNamedId,
    // Parameters' names.
    EmptyKey,
    KeyByte {
        found: u8,
    },
    KeySpace,
    // Arguments.
    TwoArgs,
    ArgsNotObject,
    EncodedArgsNotObject,
    ArgsUnfinished,
    ArgsNotUtf8,
    /// A value whose closing tag is missing holds markup of the format or
    /// of its reasoning blocks: nothing but its closing tag may end it.
    UnclosedMarkup,
    // Call objects.
    ExpectedCall,
    ExpectedList,
    NoCall,
    EmptyList,
    UnexpectedKey,
    TextNotString,
    // JSON syntax.
    ExpectedKey {
        found: u8,
    },
    ExpectedColon {
        found: u8,
    },
    ExpectedCommaOrClose {
        found: u8,
    },
    ExpectedValue {
        found: u8,
    },
    BadLiteral {
        found: u8,
    },
    Unbalanced {
        found: u8,
    },
    BadEscape {
        found: u8,
    },
    BadHex {
        found: u8,
    },
    LoneSurrogate,
    ControlChar {
        found: u8,
    },
    BadNumber {
        found: u8,
    },
    TooDeep {
        limit: usize,
    },
    // Python-like notation.
    PositionalArg,
    NestedCall,
    NotALiteral,
    StringPrefix,
    DictKey {
        found: u8,
    },
    Parenthesised,
}

/// A byte as a reader would want to see it in a message.
pub(crate) fn describe(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("`{}`", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

impl Reason {
    /// A limit, not a syntax error: reported even in tentative blocks.
    pub(crate) fn is_limit(self) -> bool {
        matches!(
            self,
            Reason::TooLong { .. } | Reason::TooDeep { .. } | Reason::NameTooLong { .. }
        )
    }

    /// A value that never closed holds markup: reported as `unclosed`.
    pub(crate) fn is_unclosed(self) -> bool {
        self == Reason::UnclosedMarkup
    }

    /// The options refused the call (see `Admit`).
    pub(crate) fn is_refusal(self) -> bool {
        matches!(
            self,
            Reason::TooManyCalls { .. } | Reason::NotTheTool | Reason::FailsSchema
        )
    }

    /// The words. `lit` is the literal the block expected, for
    /// [`Reason::ExpectedLit`].
    pub(crate) fn message(self, lit: Option<&Lit>) -> String {
        use Reason::*;
        match self {
            NoProgress => "the format's program does not advance".into(),
            ExpectedLit { found } => match lit {
                Some(l) => format!("expected `{}`, found {}", l.shown(), describe(found)),
                None => format!("unexpected {}", describe(found)),
            },
            Unexpected { found } => format!("unexpected {}", describe(found)),
            TooLong { limit, confirmed } => format!(
                "{} longer than the limit of {limit} bytes",
                if confirmed {
                    "call"
                } else {
                    "unconfirmed block"
                }
            ),
            EmptyName => "empty tool name".into(),
            NameTooLong { limit } => format!("name longer than the limit of {limit} bytes"),
            LongWord => "a word too long to be a tool name".into(),
            NameByte { found } => format!("{} is not allowed in a tool name", describe(found)),
            NameSpace => "whitespace inside a tool name".into(),
            SelfClosing => "the tool name ends with `/`: a self-closing tag is no call \
                            (a call's tag holds its parameters and has its closing tag)"
                .into(),
            NameNotUtf8 => "tool name is not UTF-8".into(),
            NameNotString => "the tool name is not a string".into(),
            BadNameString => "the name is not a valid JSON string".into(),
            NotATool => "the name is not one of the tools".into(),
            TooManyCalls { limit } => format!(
                "a call after the {limit} allowed (`max_calls`, the request's \
                 `parallel_tool_calls: false`)"
            ),
            NotTheTool => "a call of another tool than the one allowed (`only`, the request's \
                           named `tool_choice`)"
                .into(),
            FailsSchema => "the call does not fit its tool's schema (`check_calls: reject`)".into(),
            TwoNames => "the call has two names".into(),
            NoName => "the call has no tool name".into(),
            BadNamedId => "the call id is not `NAMESPACE.NAME:INDEX`".into(),
            EmptyKey => "empty parameter name".into(),
            KeyByte { found } => format!("{} is not allowed in a parameter name", describe(found)),
            KeySpace => "whitespace inside a parameter name".into(),
            TwoArgs => "the call has two arguments values".into(),
            ArgsNotObject => "the arguments are not a JSON object".into(),
            EncodedArgsNotObject => "the arguments string does not hold a JSON object".into(),
            ArgsUnfinished => "the arguments did not end".into(),
            ArgsNotUtf8 => "the arguments are not UTF-8".into(),
            UnclosedMarkup => "a value has no closing tag and holds markup (of the format or \
                of a reasoning block), so the markup after it cannot end it"
                .into(),
            ExpectedCall => "expected a call object".into(),
            ExpectedList => "expected a list of calls".into(),
            NoCall => "no call in the object".into(),
            EmptyList => "an empty list of calls".into(),
            UnexpectedKey => "a key that no call object has".into(),
            TextNotString => "the text envelope's value is not a string".into(),
            ExpectedKey { found } => format!("expected an object key, found {}", describe(found)),
            ExpectedColon { found } => {
                format!("expected `:` after a key, found {}", describe(found))
            }
            ExpectedCommaOrClose { found } => format!(
                "expected `,` or a closing bracket, found {}",
                describe(found)
            ),
            ExpectedValue { found } => format!("expected a JSON value, found {}", describe(found)),
            BadLiteral { found } => format!("invalid literal at {}", describe(found)),
            Unbalanced { found } => format!("unbalanced {}", describe(found)),
            BadEscape { found } => format!("invalid escape \\{}", describe(found)),
            BadHex { found } => format!("invalid \\u escape at {}", describe(found)),
            LoneSurrogate => "a lone UTF-16 surrogate in a \\u escape".into(),
            ControlChar { found } => {
                format!("raw control character {} in a string", describe(found))
            }
            BadNumber { found } => format!("invalid number at {}", describe(found)),
            TooDeep { limit } => format!("nesting deeper than the limit of {limit}"),
            PositionalArg => "a positional argument: only keyword arguments (`name=value`) \
                              can be named in the arguments object"
                .into(),
            NestedCall => "a call inside the arguments: only literal values can be read".into(),
            NotALiteral => "a name where a value must be: only literal values can be read".into(),
            StringPrefix => "a string prefix other than `r` or `u`".into(),
            DictKey { found } => format!(
                "a dictionary key must be a string or a number, found {}",
                describe(found)
            ),
            Parenthesised => {
                "a parenthesised value that is not a tuple (a tuple of one needs a `,`)".into()
            }
        }
    }
}

/// Why a call could not go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stop {
    pub reason: Reason,
    pub kind: StopKind,
}

/// What a [`Stop`] says of the block's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StopKind {
    /// Markup that was a call went wrong.
    Failed,
    /// Nothing was wrong with the text: it is just not a call (silent in a
    /// tentative block that showed no call).
    NotACall,
}

impl Stop {
    pub(crate) fn fail(reason: Reason) -> Stop {
        Stop {
            reason,
            kind: StopKind::Failed,
        }
    }

    pub(crate) fn not_a_call(reason: Reason) -> Stop {
        Stop {
            reason,
            kind: StopKind::NotACall,
        }
    }
}
