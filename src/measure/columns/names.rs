//! The column names of a row, from serde: every field a row serializes (a field skipped when
//! `None` is absent), and the fields of a nested struct (a result's `facts` section) in its
//! place, under their own names; a tuple of structs names each one's in turn. The csv crate
//! writes a nested struct's values in place but refuses to name them in a header, so headers
//! are named here and values left to it.

use serde::ser::{self, Impossible, Serialize, SerializeStruct, Serializer};
use std::fmt;

/// Why a row has no column names (it is not a struct of scalars and structs).
#[derive(Debug)]
pub struct NotColumns(String);

impl fmt::Display for NotColumns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a row of columns: {}", self.0)
    }
}

impl std::error::Error for NotColumns {}

impl ser::Error for NotColumns {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        NotColumns(msg.to_string())
    }
}

/// The names of `row`'s columns, in order.
pub fn names<T: Serialize + ?Sized>(row: &T) -> Result<Vec<String>, NotColumns> {
    match row.serialize(Probe)? {
        Value::Nested(n) => Ok(n),
        Value::Scalar => Err(NotColumns("a single value".into())),
    }
}

/// What one value is: one cell, or a struct of named cells.
enum Value {
    Scalar,
    Nested(Vec<String>),
}

struct Probe;

/// A struct's fields being named.
struct Fields(Vec<String>);

/// A tuple of structs (a row made of several records side by side) names its elements' fields
/// in turn, as the csv crate writes their values.
struct Elements(Vec<String>);

impl Elements {
    fn add<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NotColumns> {
        match value.serialize(Probe)? {
            Value::Nested(n) => self.0.extend(n),
            Value::Scalar => return Err(ser::Error::custom("a tuple's value has no name")),
        }
        Ok(())
    }
}

impl ser::SerializeTuple for Elements {
    type Ok = Value;
    type Error = NotColumns;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NotColumns> {
        self.add(value)
    }

    fn end(self) -> Result<Value, NotColumns> {
        Ok(Value::Nested(self.0))
    }
}

impl ser::SerializeTupleStruct for Elements {
    type Ok = Value;
    type Error = NotColumns;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NotColumns> {
        self.add(value)
    }

    fn end(self) -> Result<Value, NotColumns> {
        Ok(Value::Nested(self.0))
    }
}

impl SerializeStruct for Fields {
    type Ok = Value;
    type Error = NotColumns;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), NotColumns> {
        match value.serialize(Probe)? {
            Value::Scalar => self.0.push(key.to_string()),
            Value::Nested(n) => self.0.extend(n),
        }
        Ok(())
    }

    fn end(self) -> Result<Value, NotColumns> {
        Ok(Value::Nested(self.0))
    }
}

macro_rules! scalar {
    ($($f:ident: $t:ty),*) => {$(
        fn $f(self, _: $t) -> Result<Value, NotColumns> {
            Ok(Value::Scalar)
        }
    )*};
}

impl Serializer for Probe {
    type Ok = Value;
    type Error = NotColumns;
    type SerializeSeq = Impossible<Value, NotColumns>;
    type SerializeTuple = Elements;
    type SerializeTupleStruct = Elements;
    type SerializeTupleVariant = Impossible<Value, NotColumns>;
    type SerializeMap = Impossible<Value, NotColumns>;
    type SerializeStruct = Fields;
    type SerializeStructVariant = Impossible<Value, NotColumns>;

    scalar!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_f32: f32, serialize_f64: f64, serialize_char: char,
        serialize_str: &str, serialize_bytes: &[u8]);

    fn serialize_none(self) -> Result<Value, NotColumns> {
        Ok(Value::Scalar)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Value, NotColumns> {
        v.serialize(Probe)
    }

    fn serialize_unit(self) -> Result<Value, NotColumns> {
        Ok(Value::Scalar)
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<Value, NotColumns> {
        Ok(Value::Scalar)
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<Value, NotColumns> {
        Ok(Value::Scalar)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Value, NotColumns> {
        v.serialize(Probe)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Value, NotColumns> {
        Ok(Value::Scalar)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotColumns> {
        Err(ser::Error::custom("a sequence is no column"))
    }

    fn serialize_tuple(self, n: usize) -> Result<Elements, NotColumns> {
        Ok(Elements(Vec::with_capacity(n)))
    }

    fn serialize_tuple_struct(self, _: &'static str, n: usize) -> Result<Elements, NotColumns> {
        Ok(Elements(Vec::with_capacity(n)))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotColumns> {
        Err(ser::Error::custom("a tuple is no column"))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotColumns> {
        Err(ser::Error::custom("a map is no column"))
    }

    fn serialize_struct(self, _: &'static str, n: usize) -> Result<Fields, NotColumns> {
        Ok(Fields(Vec::with_capacity(n)))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotColumns> {
        Err(ser::Error::custom("a struct variant is no column"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct Inner {
        b: u32,
        c: Option<f64>,
    }

    #[derive(serde::Serialize)]
    struct Row {
        a: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        gone: Option<u8>,
        #[serde(skip_serializing_if = "Option::is_none")]
        inner: Option<Inner>,
        d: bool,
    }

    #[test]
    fn a_nested_struct_names_its_fields_in_place_and_a_skipped_field_names_nothing() {
        let row = Row {
            a: "x".into(),
            gone: None,
            inner: Some(Inner { b: 1, c: None }),
            d: true,
        };
        assert_eq!(names(&row).unwrap(), ["a", "b", "c", "d"]);
        // The csv crate writes the values in the same order, with no header.
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(vec![]);
        w.serialize(&row).unwrap();
        assert_eq!(
            String::from_utf8(w.into_inner().unwrap()).unwrap(),
            "x,1,,true\n"
        );
        let flat = Row { inner: None, ..row };
        assert_eq!(names(&flat).unwrap(), ["a", "d"]);
        // Records side by side, as a timeline's (key, interval) rows.
        let pair = (Inner { b: 2, c: None }, flat);
        assert_eq!(names(&pair).unwrap(), ["b", "c", "a", "d"]);
        assert!(names(&3u8).is_err());
    }
}
