//! The shape of one `traceEvents` entry as serde reads it, borrowing from the
//! input buffer wherever the JSON has no escapes. Only the fields some stage
//! uses are named; everything else is skipped without being built.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_json::value::RawValue;

/// One event, as written.
#[derive(Default)]
#[cfg_attr(test, derive(Debug))]
pub(crate) struct RawEvent<'a> {
    pub ph: Option<Cow<'a, str>>,
    pub cat: Option<Cow<'a, str>>,
    pub name: Option<Cow<'a, str>>,
    pub pid: Option<RawTrackId<'a>>,
    pub tid: Option<RawTrackId<'a>>,
    pub ts: Option<LooseF64>,
    pub dur: Option<LooseF64>,
    pub id: Option<LooseId>,
    /// Boxed: the args are most of an event's size, and an unboxed event is
    /// moved several times on its way from serde to the builder (a memmove
    /// of ~600 bytes an event was 12% of loading an event-dense trace).
    /// Not read for a Python frame ([`PYTHON_FRAME`]).
    pub args: Option<Box<RawArgs<'a>>>,
}

/// The category of Python frames, whose `args` (`Python id`, `Python
/// parent id`, `Python thread`) no stage reads. Traces recorded with
/// `with_stack=True` are about half such frames, so their `args` are
/// skipped unparsed when the category comes first, as the profiler writes
/// it (about a tenth of loading such a trace).
const PYTHON_FRAME: &str = "python_function";

/// An event's keys; [`EventKey::Other`] for any the stages do not read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKey {
    Ph,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    Args,
    Other,
}

impl EventKey {
    /// The key written as `key`.
    pub fn of(key: &[u8]) -> EventKey {
        match key {
            b"ph" => EventKey::Ph,
            b"cat" => EventKey::Cat,
            b"name" => EventKey::Name,
            b"pid" => EventKey::Pid,
            b"tid" => EventKey::Tid,
            b"ts" => EventKey::Ts,
            b"dur" => EventKey::Dur,
            b"id" => EventKey::Id,
            b"args" => EventKey::Args,
            _ => EventKey::Other,
        }
    }

    fn name(self) -> &'static str {
        match self {
            EventKey::Ph => "ph",
            EventKey::Cat => "cat",
            EventKey::Name => "name",
            EventKey::Pid => "pid",
            EventKey::Tid => "tid",
            EventKey::Ts => "ts",
            EventKey::Dur => "dur",
            EventKey::Id => "id",
            EventKey::Args => "args",
            EventKey::Other => "",
        }
    }
}

/// The keys of one event read so far: a key given twice is an error, as
/// with serde's derive ([`EventKey::Other`] may repeat).
#[derive(Default)]
pub(crate) struct SeenKeys(u16);

impl SeenKeys {
    /// Records `key`; false when it was seen before.
    pub fn first(&mut self, key: EventKey) -> bool {
        if key == EventKey::Other {
            return true;
        }
        let bit = 1 << key as u16;
        let first = self.0 & bit == 0;
        self.0 |= bit;
        first
    }
}

/// Whether an event's `args` are read: a Python frame's are not
/// ([`PYTHON_FRAME`]), when its category came before them.
pub(crate) fn reads_args(event: &RawEvent) -> bool {
    event.cat.as_deref() != Some(PYTHON_FRAME)
}

impl<'de> Deserialize<'de> for EventKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = EventKey;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an event key")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<EventKey, E> {
                Ok(EventKey::of(key.as_bytes()))
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for RawEvent<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EventVisitor;
        impl<'de> Visitor<'de> for EventVisitor {
            type Value = RawEvent<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an event object")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut event = RawEvent::default();
                let mut seen = SeenKeys::default();
                while let Some(key) = map.next_key::<EventKey>()? {
                    if !seen.first(key) {
                        return Err(de::Error::duplicate_field(key.name()));
                    }
                    match key {
                        EventKey::Ph => event.ph = map.next_value()?,
                        EventKey::Cat => event.cat = map.next_value()?,
                        EventKey::Name => event.name = map.next_value()?,
                        EventKey::Pid => event.pid = map.next_value()?,
                        EventKey::Tid => event.tid = map.next_value()?,
                        EventKey::Ts => event.ts = map.next_value()?,
                        EventKey::Dur => event.dur = map.next_value()?,
                        EventKey::Id => event.id = map.next_value()?,
                        EventKey::Args if !reads_args(&event) => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                        EventKey::Args => event.args = map.next_value()?,
                        EventKey::Other => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(event)
            }
        }
        deserializer.deserialize_map(EventVisitor)
    }
}

/// The `args` fields some stage reads.
#[derive(Deserialize, Default)]
#[cfg_attr(test, derive(Debug))]
pub(crate) struct RawArgs<'a> {
    #[serde(default)]
    pub correlation: Option<LooseId>,
    #[serde(rename = "Input Dims", borrow, default)]
    pub input_dims: Option<&'a RawValue>,
    #[serde(rename = "Input type", borrow, default)]
    pub input_type: Option<&'a RawValue>,
    #[serde(rename = "Input Strides", borrow, default)]
    pub input_strides: Option<&'a RawValue>,
    #[serde(rename = "Concrete Inputs", borrow, default)]
    pub concrete_inputs: Option<&'a RawValue>,
    #[serde(rename = "Sequence number", default)]
    pub sequence_number: Option<LooseI64>,
    #[serde(rename = "Fwd thread id", default)]
    pub fwd_thread_id: Option<LooseI64>,
    #[serde(default)]
    pub device: Option<LooseI64>,
    #[serde(default)]
    pub stream: Option<LooseI64>,
    #[serde(default)]
    pub bytes: Option<LooseI64>,
    #[serde(default)]
    pub grid: Option<LooseDims3>,
    #[serde(default)]
    pub block: Option<LooseDims3>,
    /// The kernel a launch call launches (ROCm traces name it on the call).
    #[serde(borrow, default)]
    pub kernel: Option<Cow<'a, str>>,
    /// CUDA graph of a replayed kernel, copy or set.
    #[serde(rename = "graph id", default)]
    pub graph_id: Option<LooseI64>,
    /// Node of that graph.
    #[serde(rename = "graph node id", default)]
    pub graph_node_id: Option<LooseI64>,
    /// `process_name` / `thread_name` metadata events carry their name here.
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    /// `process_labels` metadata events.
    #[serde(borrow, default)]
    pub labels: Option<Cow<'a, str>>,
    /// `Collective name` of a communication kernel (`allreduce`), kept as
    /// raw JSON so that an odd value never fails the event.
    #[serde(rename = "Collective name", borrow, default)]
    pub collective_name: Option<&'a RawValue>,
    /// `Process Group Name` of a communication kernel.
    #[serde(rename = "Process Group Name", borrow, default)]
    pub process_group_name: Option<&'a RawValue>,
    /// `dtype` of a communication kernel's message (`BFloat16`).
    #[serde(borrow, default)]
    pub dtype: Option<&'a RawValue>,
    /// `In msg nelems`.
    #[serde(rename = "In msg nelems", default)]
    pub in_msg_nelems: Option<LooseI64>,
    /// `Out msg nelems`.
    #[serde(rename = "Out msg nelems", default)]
    pub out_msg_nelems: Option<LooseI64>,
    /// `Group size`.
    #[serde(rename = "Group size", default)]
    pub group_size: Option<LooseI64>,
    /// `Seq`: the collective's sequence number in its process group.
    #[serde(rename = "Seq", default)]
    pub seq: Option<LooseI64>,
}

/// A pid or tid: a number, or a string.
#[cfg_attr(test, derive(Debug))]
pub(crate) enum RawTrackId<'a> {
    Num(i64),
    Text(Cow<'a, str>),
}

impl<'de: 'a, 'a> Deserialize<'de> for RawTrackId<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TrackVisitor;
        impl<'de> Visitor<'de> for TrackVisitor {
            type Value = RawTrackId<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(RawTrackId::Num(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(i64::try_from(v).map_or_else(
                    |_| RawTrackId::Text(Cow::Owned(v.to_string())),
                    RawTrackId::Num,
                ))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(RawTrackId::Text(Cow::Owned(v.to_string())))
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(RawTrackId::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(RawTrackId::Text(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_any(TrackVisitor)
    }
}

/// A timestamp or duration: a number, or a numeric string.
#[cfg_attr(test, derive(Debug))]
pub(crate) struct LooseF64(pub f64);

impl<'de> Deserialize<'de> for LooseF64 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct F64Visitor;
        impl Visitor<'_> for F64Visitor {
            type Value = LooseF64;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(LooseF64(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(LooseF64(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(LooseF64(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                v.trim()
                    .parse()
                    .map(LooseF64)
                    .map_err(|_| E::invalid_value(de::Unexpected::Str(v), &self))
            }
        }
        deserializer.deserialize_any(F64Visitor)
    }
}

/// An integer argument that some traces write as a string (`"0x0"`, `"2560"`)
/// or a float; anything unreadable becomes `None` rather than an error, since
/// these fields are descriptive.
#[cfg_attr(test, derive(Debug))]
pub(crate) struct LooseI64(pub Option<i64>);

impl<'de> Deserialize<'de> for LooseI64 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct I64Visitor;
        impl Visitor<'_> for I64Visitor {
            type Value = LooseI64;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(LooseI64(Some(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(LooseI64(i64::try_from(v).ok()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(LooseI64(
                    (v.fract() == 0.0 && v.abs() < 9.0e18).then_some(v as i64),
                ))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                let v = v.trim();
                let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
                    Some(hex) => i64::from_str_radix(hex, 16).ok(),
                    None => v.parse().ok(),
                };
                Ok(LooseI64(parsed))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(LooseI64(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(LooseI64(None))
            }
        }
        deserializer.deserialize_any(I64Visitor)
    }
}

/// An identifier used only for equality (correlation, External id, flow id).
/// Ids may exceed `i64` (and even `u64`, which serde_json then reads as a
/// float); each distinct written value maps to a distinct key.
#[cfg_attr(test, derive(Debug))]
pub(crate) struct LooseId(pub Option<u64>);

impl<'de> Deserialize<'de> for LooseId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = LooseId;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an id")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(LooseId(Some(v as u64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(LooseId(Some(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(LooseId(Some(v.to_bits())))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(LooseId(Some(
                    v.trim().parse().unwrap_or_else(|_| string_key(v)),
                )))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(LooseId(None))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

/// A stable 64-bit key for a non-numeric id string (FNV-1a).
fn string_key(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A launch geometry `[x, y, z]`. Inductor writes `"grid(100,)"` strings on
/// CPU ops; anything that is not three integers becomes `None`.
#[cfg_attr(test, derive(Debug))]
pub(crate) struct LooseDims3(pub Option<[u32; 3]>);

impl<'de> Deserialize<'de> for LooseDims3 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DimsVisitor;
        impl<'de> Visitor<'de> for DimsVisitor {
            type Value = LooseDims3;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("three integers")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut dims = [0u32; 3];
                let mut count = 0;
                let mut valid = true;
                while let Some(LooseI64(value)) = seq.next_element::<LooseI64>()? {
                    match (
                        dims.get_mut(count),
                        value.and_then(|v| u32::try_from(v).ok()),
                    ) {
                        (Some(slot), Some(v)) => *slot = v,
                        _ => valid = false,
                    }
                    count += 1;
                }
                Ok(LooseDims3((valid && count == 3).then_some(dims)))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(LooseDims3(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(LooseDims3(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(LooseDims3(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(LooseDims3(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(LooseDims3(None))
            }
        }
        deserializer.deserialize_any(DimsVisitor)
    }
}
