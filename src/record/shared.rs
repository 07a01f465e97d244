//! Parts of a trial record that many records repeat verbatim — a task's expected calls and the declared
//! parameters of its tools, the same in every variant, layout, backend and repetition — parsed once per
//! distinct text and shared.
//!
//! Reading a million records, building those parts again for every record was a fifth of the report's
//! time (a tree of maps and strings per record, and freeing it afterwards). [`Shared`] keeps the parsed
//! value behind an [`Arc`]; deserialising it takes the part's raw JSON text and looks it up in a small
//! per-thread cache, so a repeated text costs one copy and one hash lookup. The serialised form is the
//! value's own: the trial file format does not change.

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use std::any::{Any, TypeId};
use std::sync::Arc;

/// A record part parsed once per distinct JSON text (per thread) and shared by the records that repeat it.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Shared<T>(Arc<T>);

impl<T> Shared<T> {
    pub fn new(value: T) -> Self {
        Shared(Arc::new(value))
    }
}

impl<T> From<T> for Shared<T> {
    fn from(value: T) -> Self {
        Shared::new(value)
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: Serialize> Serialize for Shared<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// Texts kept per thread before the cache starts over: enough for the distinct tasks of any run read
/// in one go, bounded so a file of all-different records does not grow it without end.
const CACHE_BYTES: usize = 16 << 20;

type Cache =
    rustc_hash::FxHashMap<TypeId, rustc_hash::FxHashMap<Box<str>, Arc<dyn Any + Send + Sync>>>;

thread_local! {
    static CACHE: std::cell::RefCell<(Cache, usize)> = Default::default();
}

impl<'de, T: DeserializeOwned + Send + Sync + 'static> Deserialize<'de> for Shared<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw: Box<RawValue> = Deserialize::deserialize(d)?;
        let text = raw.get();
        let hit =
            CACHE.with(|c| c.borrow().0.get(&TypeId::of::<T>()).and_then(|m| m.get(text)).cloned());
        if let Some(value) = hit.and_then(|v| v.downcast::<T>().ok()) {
            return Ok(Shared(value));
        }
        let value: Arc<T> = Arc::new(
            serde_json::from_str(text).map_err(|e| D::Error::custom(without_position(&e)))?,
        );
        CACHE.with(|c| {
            let (cache, bytes) = &mut *c.borrow_mut();
            if *bytes + text.len() > CACHE_BYTES {
                cache.clear();
                *bytes = 0;
            }
            *bytes += text.len();
            cache.entry(TypeId::of::<T>()).or_default().insert(text.into(), value.clone());
        });
        Ok(Shared(value))
    }
}

/// The parser's message without its position inside the part (the outer parser adds the record's).
fn without_position(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    message.strip_suffix(&suffix).map(str::to_string).unwrap_or(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[derive(Debug, Deserialize)]
    struct Record {
        part: Shared<BTreeMap<String, Vec<u32>>>,
    }

    #[test]
    fn equal_texts_share_one_value_and_different_ones_do_not() {
        let a: Record = serde_json::from_str(r#"{"part": {"x": [1, 2]}}"#).unwrap();
        let b: Record = serde_json::from_slice(br#"{"part": {"x": [1, 2]}}"#).unwrap();
        let c: Record = serde_json::from_str(r#"{"part": {"x": [1, 3]}}"#).unwrap();
        assert!(Arc::ptr_eq(&a.part.0, &b.part.0));
        assert!(!Arc::ptr_eq(&a.part.0, &c.part.0));
        assert_eq!(a.part["x"], vec![1, 2]);
        assert_eq!(c.part["x"], vec![1, 3]);
        // Read from a stream (no borrowed text) too.
        let d: Record = serde_json::from_reader(&br#"{"part": {"x": [1, 2]}}"#[..]).unwrap();
        assert_eq!(d.part, a.part);
    }

    #[test]
    fn serialises_as_the_value_and_reports_a_bad_part_at_the_record() {
        let a: Record = serde_json::from_str(r#"{"part": {"x": [1, 2]}}"#).unwrap();
        assert_eq!(serde_json::to_string(&a.part).unwrap(), r#"{"x":[1,2]}"#);
        let e =
            serde_json::from_str::<Record>(r#"{"part": {"x": ["one"]}}"#).unwrap_err().to_string();
        assert!(
            e.starts_with("invalid type: string \"one\", expected u32 at line 1 column"),
            "{e}"
        );
        assert_eq!(e.matches(" at line ").count(), 1, "{e}");
    }
}
