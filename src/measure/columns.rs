//! Flat rows from nested records. A result is a few structs (its identity, its [`Setup`], its
//! figures, its optional sections), but a CSV row has no nesting (the `csv` crate writes no map,
//! so `#[serde(flatten)]` cannot be used) and the columns of the files written so far interleave
//! those parts (`block_count` sits between the setup's `block_size_bytes` and `threads`). So a
//! record writes itself as one flat struct: each [`Part`] is serialized with its own serde
//! derive, and the record says in which runs the parts' fields follow one another
//! ([`flat_serialize!`]); a field added to a part goes at the end of that part's last run. Reading
//! back is the mirror: the row's cells are buffered by name ([`Cells`]), and each part reads the
//! fields it knows from them (an optional section is there when one of its fields is).
//!
//! [`Setup`]: crate::config::Setup

mod names;
pub use names::{names, NotColumns};

use serde::de::{self, Deserialize, DeserializeOwned, IntoDeserializer, MapAccess, Visitor};
use serde::ser::{self, Impossible, Serialize, SerializeStruct, Serializer};
use std::collections::BTreeMap;
use std::fmt;

/// One struct of a flat row, written in runs of its fields (see the module doc).
pub struct Part<'a, T: Serialize> {
    value: Option<&'a T>,
    /// Every field in declaration order, and whether it is written (`false`: left out by a
    /// `skip_serializing_if`).
    fields: Vec<(&'static str, bool)>,
    /// The first field not written yet.
    next: usize,
}

impl<'a, T: Serialize> Part<'a, T> {
    /// The part `value` (`None`: an optional section that is not there, no field at all).
    pub fn of(value: Option<&'a T>) -> Self {
        let mut names = Names(Vec::new());
        if let Some(v) = value {
            // A struct of plain fields always serializes; anything else has no fields.
            let _ = v.serialize(&mut names);
        }
        Part {
            value,
            fields: names.0,
            next: 0,
        }
    }

    /// How many of its fields are written.
    pub fn present(&self) -> usize {
        self.fields.iter().filter(|(_, on)| *on).count()
    }

    /// The names of its fields that are written, in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.fields.iter().filter(|(_, on)| *on).map(|(n, _)| *n)
    }

    /// The names of all its fields, written or not, in order.
    pub fn fields(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.fields.iter().map(|(n, _)| *n)
    }

    /// The text of its field `name` as a table shows it (`fsync`, `1000`, `70`); `None` where
    /// it is left out or not plain.
    pub fn text_of(&self, name: &str) -> Option<String> {
        let (value, i) = (
            self.value?,
            self.fields.iter().position(|(n, _)| *n == name)?,
        );
        let mut capture = Capture(None);
        value
            .serialize(Forward {
                into: &mut capture,
                from: i,
                to: i + 1,
                at: 0,
                empty: None,
            })
            .ok()?;
        capture.0
    }

    /// Whether it has a field `name`, written or not.
    pub fn has(&self, name: &str) -> bool {
        self.fields.iter().any(|(n, _)| *n == name)
    }

    /// Writes its fields from the first not yet written through `last` (every remaining one
    /// with `None`) into `into`.
    pub fn emit<S: SerializeStruct>(
        &mut self,
        into: &mut S,
        last: Option<&str>,
    ) -> Result<(), S::Error> {
        let Some(value) = self.value else {
            return Ok(());
        };
        let end = match last {
            None => self.fields.len(),
            Some(name) => match self.fields.iter().position(|(n, _)| *n == name) {
                Some(i) => i + 1,
                None => {
                    return Err(ser::Error::custom(format!(
                        "no field `{name}` in this part"
                    )))
                }
            },
        };
        if end <= self.next {
            return Ok(());
        }
        value.serialize(Forward {
            into,
            from: self.next,
            to: end,
            at: 0,
            empty: None,
        })?;
        self.next = end;
        Ok(())
    }

    /// Writes its one field `name`; where it is left out (`None`), an empty cell under its name
    /// when `empty_if_absent`, else nothing.
    pub fn emit_one<S: SerializeStruct>(
        &self,
        into: &mut S,
        name: &str,
        empty_if_absent: bool,
    ) -> Result<(), S::Error> {
        let (Some(value), Some(i)) = (self.value, self.fields.iter().position(|(n, _)| *n == name))
        else {
            return Ok(());
        };
        value.serialize(Forward {
            into,
            from: i,
            to: i + 1,
            at: 0,
            empty: empty_if_absent.then_some(()),
        })
    }
}

/// Writes `parts` as one flat struct named `$name`, in runs: each step `part` (every remaining
/// field of it) or `part => "last"` (its fields through `last`).
///
/// `flat_serialize!(s, "Row", { id: Some(&self.identity), setup: Some(&self.setup) }, [id =>
/// "file_size_bytes", setup, id])` writes the identity through `file_size_bytes`, the whole
/// setup, then the rest of the identity.
macro_rules! flat_serialize {
    ($s:expr, $name:literal, { $($part:ident : $val:expr),+ $(,)? }, [ $( $p:ident $(=> $last:literal)? ),+ $(,)? ]) => {{
        use serde::ser::SerializeStruct as _;
        $( let mut $part = $crate::measure::columns::Part::of($val); )+
        let len = 0 $( + $part.present() )+;
        let mut st = $s.serialize_struct($name, len)?;
        $( $p.emit(&mut st, None $(.or(Some($last)))?)?; )+
        st.end()
    }};
}
pub(crate) use flat_serialize;

/// The cells of one row by name, as read: a CSV record's text, or a JSON or CBOR value.
#[derive(Debug, Clone, Default)]
pub struct Cells(BTreeMap<String, Cell>);

/// One cell as read.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Text(String),
}

impl Cells {
    /// The cells of a CSV record under `headers`, each kept as its text (so `00a1` or `0012`
    /// stays what it was).
    pub fn of_record(headers: &csv::StringRecord, record: &csv::StringRecord) -> Cells {
        Cells(
            headers
                .iter()
                .zip(record.iter())
                .map(|(h, v)| (h.to_string(), Cell::Text(v.to_string())))
                .collect(),
        )
    }

    /// Whether the row has a column `name` (empty or not).
    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// The part `T` from the cells it names (the others ignored).
    pub fn part<T: DeserializeOwned, E: de::Error>(&self) -> Result<T, E> {
        T::deserialize(CellsAccess {
            cells: self.0.iter(),
            value: None,
        })
        .map_err(|e| E::custom(e.0))
    }

    /// The optional section `T`: there when one of its fields has a value (a file whose header
    /// names a section's columns has empty cells there in the rows without it).
    pub fn section<T: DeserializeOwned, E: de::Error>(&self) -> Result<Option<T>, E> {
        let fields = crate::config::serde_fields::<T>();
        let filled = |c: &Cell| !matches!(c, Cell::Null) && *c != Cell::Text(String::new());
        if fields.iter().any(|f| self.0.get(*f).is_some_and(filled)) {
            self.part().map(Some)
        } else {
            Ok(None)
        }
    }
}

impl<'de> de::Deserialize<'de> for Cells {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Cells;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a row of named cells")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Cells, A::Error> {
                let mut out = BTreeMap::new();
                while let Some((k, v)) = m.next_entry::<String, Cell>()? {
                    out.insert(k, v);
                }
                Ok(Cells(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> de::Deserialize<'de> for Cell {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Cell;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a plain value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Cell, E> {
                Ok(Cell::Bool(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Cell, E> {
                Ok(Cell::U64(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Cell, E> {
                Ok(Cell::I64(v))
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<Cell, E> {
                Ok(Cell::Text(v.to_string()))
            }
            fn visit_i128<E: de::Error>(self, v: i128) -> Result<Cell, E> {
                Ok(Cell::Text(v.to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Cell, E> {
                Ok(Cell::F64(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Cell, E> {
                Ok(Cell::Text(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> Result<Cell, E> {
                Ok(Cell::Text(v))
            }
            fn visit_none<E>(self) -> Result<Cell, E> {
                Ok(Cell::Null)
            }
            fn visit_unit<E>(self) -> Result<Cell, E> {
                Ok(Cell::Null)
            }
            fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Cell, D::Error> {
                Cell::deserialize(d)
            }
        }
        d.deserialize_any(V)
    }
}

/// The cells of a row as a map, each value's error naming its column.
struct CellsAccess<'a> {
    cells: std::collections::btree_map::Iter<'a, String, Cell>,
    value: Option<(&'a str, &'a Cell)>,
}

impl<'de> de::Deserializer<'de> for CellsAccess<'de> {
    type Error = CellError;
    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CellError> {
        v.visit_map(self)
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

impl<'de> MapAccess<'de> for CellsAccess<'de> {
    type Error = CellError;
    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, CellError> {
        let Some((k, v)) = self.cells.next() else {
            return Ok(None);
        };
        self.value = Some((k, v));
        seed.deserialize(de::value::BorrowedStrDeserializer::new(k))
            .map(Some)
    }
    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, CellError> {
        let (k, v) = self
            .value
            .take()
            .ok_or_else(|| CellError("a value before its key".into()))?;
        seed.deserialize(v)
            .map_err(|e| CellError(format!("column {k}: {e}")))
    }
}

/// An error reading a cell (its message is handed to the row's own error type).
#[derive(Debug)]
pub struct CellError(String);

impl fmt::Display for CellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CellError {}

impl de::Error for CellError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        CellError(msg.to_string())
    }
}

impl<'a> IntoDeserializer<'a, CellError> for &'a Cell {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

impl Cell {
    fn text(&self) -> Option<String> {
        Some(match self {
            Cell::Null => return None,
            Cell::Bool(b) => b.to_string(),
            Cell::U64(n) => n.to_string(),
            Cell::I64(n) => n.to_string(),
            Cell::F64(v) => v.to_string(),
            Cell::Text(t) => t.clone(),
        })
    }

    fn parsed<T: std::str::FromStr>(&self, what: &str) -> Result<T, CellError> {
        let text = self.text().unwrap_or_default();
        text.trim()
            .parse()
            .map_err(|_| CellError(format!("'{text}' is not {what}")))
    }
}

macro_rules! number {
    ($($method:ident $visit:ident $t:ty),+) => {$(
        fn $method<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CellError> {
            match self {
                Cell::U64(n) => match <$t>::try_from(*n) {
                    Ok(n) => v.$visit(n),
                    Err(_) => Err(CellError(format!("{n} is out of range"))),
                },
                Cell::I64(n) => match <$t>::try_from(*n) {
                    Ok(n) => v.$visit(n),
                    Err(_) => Err(CellError(format!("{n} is out of range"))),
                },
                other => v.$visit(other.parsed::<$t>("a whole number")?),
            }
        }
    )+};
}

impl<'de> de::Deserializer<'de> for &'de Cell {
    type Error = CellError;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CellError> {
        match self {
            Cell::Null => v.visit_none(),
            Cell::Bool(b) => v.visit_bool(*b),
            Cell::U64(n) => v.visit_u64(*n),
            Cell::I64(n) => v.visit_i64(*n),
            Cell::F64(x) => v.visit_f64(*x),
            Cell::Text(t) => v.visit_str(t),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CellError> {
        match self {
            // An empty CSV cell is a value left out, as the `csv` crate reads it.
            Cell::Null => v.visit_none(),
            Cell::Text(t) if t.is_empty() => v.visit_none(),
            _ => v.visit_some(self),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CellError> {
        match self {
            Cell::Bool(b) => v.visit_bool(*b),
            other => v.visit_bool(other.parsed("true or false")?),
        }
    }

    number!(
        deserialize_u8 visit_u8 u8,
        deserialize_u16 visit_u16 u16,
        deserialize_u32 visit_u32 u32,
        deserialize_u64 visit_u64 u64,
        deserialize_i8 visit_i8 i8,
        deserialize_i16 visit_i16 i16,
        deserialize_i32 visit_i32 i32,
        deserialize_i64 visit_i64 i64
    );

    fn deserialize_f32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CellError> {
        self.deserialize_f64(v)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CellError> {
        match self {
            Cell::F64(x) => v.visit_f64(*x),
            Cell::U64(n) => v.visit_f64(*n as f64),
            Cell::I64(n) => v.visit_f64(*n as f64),
            other => v.visit_f64(other.parsed("a number")?),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CellError> {
        match self {
            Cell::Text(t) => v.visit_str(t),
            other => match other.text() {
                Some(t) => v.visit_string(t),
                None => v.visit_unit(),
            },
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CellError> {
        self.deserialize_str(v)
    }

    fn deserialize_char<V: Visitor<'de>>(self, v: V) -> Result<V::Value, CellError> {
        self.deserialize_str(v)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, CellError> {
        let text = self.text().unwrap_or_default();
        v.visit_enum(text.into_deserializer())
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, CellError> {
        v.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        u128 i128 bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
        ignored_any
    }
}

/// Keeps the text of the one field written into it ([`Part::text_of`]).
struct Capture(Option<String>);

impl SerializeStruct for Capture {
    type Ok = ();
    type Error = NotAStruct;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        _: &'static str,
        value: &T,
    ) -> Result<(), NotAStruct> {
        self.0 = value.serialize(Text)?;
        Ok(())
    }
    fn end(self) -> Result<(), NotAStruct> {
        Ok(())
    }
}

/// A plain value as text: numbers as `Display` writes them, an enum as its serde name, `None`
/// for a left-out value; anything else is not plain.
struct Text;

macro_rules! text_of_display {
    ($($method:ident $t:ty),+) => {$(
        fn $method(self, v: $t) -> Result<Option<String>, NotAStruct> {
            Ok(Some(v.to_string()))
        }
    )+};
}

impl Serializer for Text {
    type Ok = Option<String>;
    type Error = NotAStruct;
    type SerializeSeq = Impossible<Option<String>, NotAStruct>;
    type SerializeTuple = Impossible<Option<String>, NotAStruct>;
    type SerializeTupleStruct = Impossible<Option<String>, NotAStruct>;
    type SerializeTupleVariant = Impossible<Option<String>, NotAStruct>;
    type SerializeMap = Impossible<Option<String>, NotAStruct>;
    type SerializeStruct = Impossible<Option<String>, NotAStruct>;
    type SerializeStructVariant = Impossible<Option<String>, NotAStruct>;
    text_of_display!(
        serialize_bool bool, serialize_i8 i8, serialize_i16 i16, serialize_i32 i32,
        serialize_i64 i64, serialize_u8 u8, serialize_u16 u16, serialize_u32 u32,
        serialize_u64 u64, serialize_f32 f32, serialize_f64 f64, serialize_char char,
        serialize_str &str
    );
    fn serialize_bytes(self, _: &[u8]) -> Result<Option<String>, NotAStruct> {
        Err(NotAStruct)
    }
    fn serialize_none(self) -> Result<Option<String>, NotAStruct> {
        Ok(None)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<Option<String>, NotAStruct> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Option<String>, NotAStruct> {
        Ok(None)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Option<String>, NotAStruct> {
        Ok(None)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Option<String>, NotAStruct> {
        Ok(Some(variant.to_string()))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Option<String>, NotAStruct> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Option<String>, NotAStruct> {
        Err(NotAStruct)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotAStruct> {
        Err(NotAStruct)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotAStruct> {
        Err(NotAStruct)
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NotAStruct> {
        Err(NotAStruct)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotAStruct> {
        Err(NotAStruct)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotAStruct> {
        Err(NotAStruct)
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, NotAStruct> {
        Err(NotAStruct)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotAStruct> {
        Err(NotAStruct)
    }
}

/// Collects a struct's field names (the serializer that [`Part::of`] runs).
struct Names(Vec<(&'static str, bool)>);

/// Forwards the fields `from..to` of a struct into another struct being written; the rest are
/// passed over. With `empty`, a left-out field in the range is written as an empty cell.
struct Forward<'s, S: SerializeStruct> {
    into: &'s mut S,
    from: usize,
    to: usize,
    at: usize,
    empty: Option<()>,
}

/// The error of [`Names`]: no part is anything but a struct.
#[derive(Debug)]
struct NotAStruct;

impl fmt::Display for NotAStruct {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a part of a flat row is a struct")
    }
}

impl std::error::Error for NotAStruct {}

impl ser::Error for NotAStruct {
    fn custom<T: fmt::Display>(_: T) -> Self {
        NotAStruct
    }
}

impl SerializeStruct for &mut Names {
    type Ok = ();
    type Error = NotAStruct;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        _: &T,
    ) -> Result<(), NotAStruct> {
        self.0.push((key, true));
        Ok(())
    }
    fn skip_field(&mut self, key: &'static str) -> Result<(), NotAStruct> {
        self.0.push((key, false));
        Ok(())
    }
    fn end(self) -> Result<(), NotAStruct> {
        Ok(())
    }
}

impl<S: SerializeStruct> SerializeStruct for Forward<'_, S> {
    type Ok = ();
    type Error = S::Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), S::Error> {
        let i = self.at;
        self.at += 1;
        if (self.from..self.to).contains(&i) {
            self.into.serialize_field(key, value)?;
        }
        Ok(())
    }
    fn skip_field(&mut self, key: &'static str) -> Result<(), S::Error> {
        let i = self.at;
        self.at += 1;
        if (self.from..self.to).contains(&i) {
            if self.empty.is_some() {
                self.into.serialize_field(key, &None::<()>)?;
            } else {
                self.into.skip_field(key)?;
            }
        }
        Ok(())
    }
    fn end(self) -> Result<(), S::Error> {
        Ok(())
    }
}

/// Serializers that accept a struct only: [`Names`] and [`Forward`].
macro_rules! struct_only {
    ($ty:ty, $err:ty, $($g:tt)*) => {
        impl<$($g)*> Serializer for $ty {
            type Ok = ();
            type Error = $err;
            type SerializeSeq = Impossible<(), $err>;
            type SerializeTuple = Impossible<(), $err>;
            type SerializeTupleStruct = Impossible<(), $err>;
            type SerializeTupleVariant = Impossible<(), $err>;
            type SerializeMap = Impossible<(), $err>;
            type SerializeStruct = Self;
            type SerializeStructVariant = Impossible<(), $err>;
            fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, $err> {
                Ok(self)
            }
            fn serialize_bool(self, _: bool) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_i8(self, _: i8) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_i16(self, _: i16) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_i32(self, _: i32) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_i64(self, _: i64) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_u8(self, _: u8) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_u16(self, _: u16) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_u32(self, _: u32) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_u64(self, _: u64) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_f32(self, _: f32) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_f64(self, _: f64) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_char(self, _: char) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_str(self, _: &str) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_bytes(self, _: &[u8]) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_none(self) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), $err> {
                Err(ser::Error::custom(""))
            }
            fn serialize_unit(self) -> Result<(), $err> { Err(ser::Error::custom("")) }
            fn serialize_unit_struct(self, _: &'static str) -> Result<(), $err> {
                Err(ser::Error::custom(""))
            }
            fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), $err> {
                Err(ser::Error::custom(""))
            }
            fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, _: &T) -> Result<(), $err> {
                Err(ser::Error::custom(""))
            }
            fn serialize_newtype_variant<T: ?Sized + Serialize>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> Result<(), $err> {
                Err(ser::Error::custom(""))
            }
            fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, $err> {
                Err(ser::Error::custom(""))
            }
            fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, $err> {
                Err(ser::Error::custom(""))
            }
            fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, $err> {
                Err(ser::Error::custom(""))
            }
            fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeTupleVariant, $err> {
                Err(ser::Error::custom(""))
            }
            fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, $err> {
                Err(ser::Error::custom(""))
            }
            fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeStructVariant, $err> {
                Err(ser::Error::custom(""))
            }
        }
    };
}

struct_only!(&mut Names, NotAStruct,);
struct_only!(Forward<'s, S>, S::Error, 's, S: SerializeStruct);

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
    struct A {
        a1: u32,
        a2: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        a3: Option<f64>,
    }

    #[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
    struct B {
        b1: bool,
        b2: Option<u64>,
    }

    #[derive(Debug, Default, PartialEq)]
    struct Row {
        a: A,
        b: Option<B>,
    }

    impl Serialize for Row {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            flat_serialize!(s, "Row", { a: Some(&self.a), b: self.b.as_ref() }, [a => "a1", b, a])
        }
    }

    impl<'de> de::Deserialize<'de> for Row {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let c = Cells::deserialize(d)?;
            Ok(Row {
                a: c.part()?,
                b: c.section()?,
            })
        }
    }

    #[test]
    fn parts_interleave_in_runs_and_read_back_from_csv_json_and_cbor() {
        let full = Row {
            a: A {
                a1: 7,
                a2: "0012".into(),
                a3: Some(1.5),
            },
            b: Some(B { b1: true, b2: None }),
        };
        let text = crate::export::csv::to_csv(std::slice::from_ref(&full)).unwrap();
        assert_eq!(text, "a1,b1,b2,a2,a3\n7,true,,0012,1.5\n");
        let json = serde_json::to_string(&full).unwrap();
        assert_eq!(json, r#"{"a1":7,"b1":true,"b2":null,"a2":"0012","a3":1.5}"#);
        assert_eq!(serde_json::from_str::<Row>(&json).unwrap(), full);
        let mut cbor = Vec::new();
        ciborium::into_writer(&full, &mut cbor).unwrap();
        assert_eq!(
            ciborium::from_reader::<Row, _>(cbor.as_slice()).unwrap(),
            full
        );
        // A CSV record read as text keeps `0012`.
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let h = rd.headers().unwrap().clone();
        let rec = rd.records().next().unwrap().unwrap();
        let back: Row = Cells::of_record(&h, &rec)
            .part::<A, CellError>()
            .map(|a| Row {
                a,
                b: Cells::of_record(&h, &rec)
                    .section::<B, CellError>()
                    .unwrap(),
            })
            .unwrap();
        assert_eq!(back, full);
        // A section that is not there has no column, and reads back as not there.
        let short = Row {
            a: A::default(),
            b: None,
        };
        let text = crate::export::csv::to_csv(std::slice::from_ref(&short)).unwrap();
        assert_eq!(text, "a1,a2\n0,\n");
        let json = serde_json::to_string(&short).unwrap();
        assert_eq!(serde_json::from_str::<Row>(&json).unwrap(), short);
    }
}
