//! The providers' own deferred tool search, as layouts of the same catalog:
//!
//! - `native-search`: every tool is sent deferred (`defer_loading: true`) beside the provider's own
//!   search tool (Anthropic's `tool_search_tool_bm25`, the Responses API's `tool_search` with
//!   `execution: "server"`). The provider searches and loads; toolpick executes the calls as in `flat`
//!   and records each search the provider reports as a navigation call, with the tools it returned
//!   ([`Layout::revealed_by`]).
//! - `native-search-client`: the same deferral, but the search is a tool toolpick answers with the
//!   `search` layout's BM25: its result goes back as `tool_reference` blocks (Anthropic) or a
//!   `tool_search_output` item (Responses), so the provider loads exactly the tools toolpick found.
//!
//! Nothing is shown up front but the search tool: [`Layout::functions`] is what the prompt carries,
//! [`Layout::deferred`] what is sent for the provider to load. How a protocol writes either is the
//! backend's business; a protocol that cannot write them refuses the layout before the run.

use super::{CallOutcome, FlatLayout, Layout, LayoutKind, SearchLayout};
use crate::protocol::{FunctionDef, Message, ToolCall};
use std::borrow::Cow;

pub enum NativeLayout {
    /// The provider searches: every call goes to the catalog as in `flat`.
    Server(FlatLayout),
    /// toolpick searches: the `search` layout's meta-tool, tools loaded by its answers.
    Client(SearchLayout),
}

impl Layout for NativeLayout {
    fn kind(&self) -> LayoutKind {
        match self {
            NativeLayout::Server(_) => LayoutKind::NativeSearch,
            NativeLayout::Client(_) => LayoutKind::NativeSearchClient,
        }
    }

    fn functions(&self) -> &[FunctionDef] {
        match self {
            // The provider's own search tool is the backend's to write.
            NativeLayout::Server(_) => &[],
            NativeLayout::Client(search) => search.functions(),
        }
    }

    fn offered(&self, _messages: &[Message]) -> Cow<'_, [FunctionDef]> {
        // What a search loads is the provider's to add: the request offers the same tools every turn.
        Cow::Borrowed(self.functions())
    }

    fn deferred(&self) -> &[FunctionDef] {
        match self {
            NativeLayout::Server(flat) => flat.functions(),
            NativeLayout::Client(search) => search.catalog_functions(),
        }
    }

    fn groups(&self) -> &[crate::protocol::ToolGroup] {
        match self {
            NativeLayout::Server(flat) => flat.tool_groups(),
            NativeLayout::Client(search) => search.flat().tool_groups(),
        }
    }

    fn revealed_by(&self, names: &[String]) -> Vec<String> {
        let flat = match self {
            NativeLayout::Server(flat) => flat,
            NativeLayout::Client(search) => search.flat(),
        };
        names.iter().flat_map(|n| flat.tools_behind(n)).collect()
    }

    fn call(&self, call: &ToolCall, step: usize) -> CallOutcome {
        self.call_in(call, step, &[])
    }

    fn call_in(&self, call: &ToolCall, step: usize, messages: &[Message]) -> CallOutcome {
        match self {
            NativeLayout::Server(flat) => flat.call(call, step),
            NativeLayout::Client(search) => search.call_in(call, step, messages),
        }
    }
}
