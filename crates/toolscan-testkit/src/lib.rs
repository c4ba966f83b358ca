//! The test kit of the toolscan workspace: what the integration tests, the
//! command line's corpus test, the stream adapter's tests and the fuzz
//! target share, written once. Dev-only, never published.
//!
//! One concept a module:
//!
//! - [`rng`]: a seeded SplitMix64 generator ([`rng::Rng`]);
//! - [`chunk`]: chunk plans ([`chunk::Plan`]: whole, fixed sizes, seeded
//!   random sizes, cut offsets) and feeding a parser an input cut by one,
//!   through each of its APIs ([`chunk::Api`]: `feed`, `feed_into`, the
//!   sink API, `feed_str_with`);
//! - [`check`]: the event contract checked on one run
//!   ([`check::check_events`]), nothing lost, diagnostics within the
//!   input, runs that agree once coalesced;
//! - [`alloc`]: a counting global allocator for the memory tests (the
//!   only `unsafe` here: it forwards to the system allocator);
//! - [`corpus`]: the conformance corpus: loading the cases, comparing an
//!   outcome (events, a response, or the command line's final object) with
//!   a case's expectations, and running a case under every plan;
//! - [`expect`]: what an input makes under some formats (calls, text,
//!   diagnostics), checked under every plan in one call;
//! - [`bulk`]: large inputs of one unit repeated (a format's calls, its
//!   markers, bytes that fail at once), for the linear-cost checks.
//!
//! ```
//! use toolscan_testkit::{check, chunk, corpus};
//! let cases = corpus::load_corpus(&corpus::corpus_dir());
//! let case = cases.iter().find(|c| c.id == "hermes-basic").unwrap();
//! corpus::check_case(case).unwrap();
//!
//! let input = b"[TOOL_CALLS]get_time[ARGS]{}";
//! let plan = chunk::Plan::fixed(input.len(), 2);
//! let events = chunk::feed_every_api(|| chunk::seeded("mistral-v11"), input, &plan).unwrap();
//! assert_eq!(check::check_events(&events).unwrap().completed, 1);
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod alloc;
pub mod bulk;
pub mod check;
pub mod chunk;
pub mod corpus;
pub mod expect;
pub mod process;
pub mod prose;
pub mod rng;
