//! Cassettes: the format, building one from live traffic, and storing it.

mod append;
mod builder;
mod error;
mod faults;
mod format;
mod load;
mod mask;
mod merge;
mod presize;
mod recovery;
mod resolve;
mod rules;
pub(crate) mod save;
mod scope;
mod spill;
mod split;
mod store;
mod workdir;

pub use builder::{Builder, Direction, Finished, InteractionStream, describe, now_rfc3339};
pub use error::CassetteError;
pub use faults::{
    Delay, Disconnect, Edit, EditOp, FAULT_KINDS, FAULT_SELECTORS, Fault, FaultRule, FaultSelect,
    Faults, FaultsError, HttpStatus, ListChange, ListKind, MAX_DELAY_MS, Malformed, Wait,
    load_faults,
};
pub use format::{
    Cassette, ClientMessage, Event, FORMAT_VERSION, Interaction, ProtocolInfo, ServerIdentity,
    Transport,
};
pub use format::{
    EventRef, HttpEndpointBehaviour, HttpExchange, HttpSituation, RecordedAuth, SessionState,
    SseFrame, StepUp, StreamedEvent,
};
pub(crate) use load::to_pointer;
pub use load::{load, parse, parse_bytes};
pub(crate) use mask::{mask_event, mask_interaction};
pub use recovery::{Recovery, SkipReason, SkippedLine, recover, recover_idle};
pub use resolve::ResolveError;
pub use rules::{
    Auth, KeyRule, KeyRuleError, MethodCase, NormalizeRule, OnExhausted, RuleOverrides, Rules,
    RulesError, Strategy,
};
pub use save::{save, save_streamed, to_text};
pub use scope::{Joined, Member, Scope, ScopeAction};
pub use store::{Journal, journal_owner, journal_path, journals, process_journal_path};
pub(crate) use workdir::recorded_place;
pub(crate) use workdir::{is_relative, resolve_cwd};
pub use workdir::{mask_transport, recorded_cwd, stdio_transport};
