//! The reference builder: a [`Sink`] that makes a [`Value`] tree, with the
//! Python `ValueBuilder`'s semantics (`toonstream/_reference/build.py`): numbers by the
//! README's policy (ints exact at any size, floats as `float()`, `-0 -> 0`,
//! overflow kept exact as a decimal), duplicate keys last-write-wins at the
//! first key's position (non-strict; a Python dict assignment), tables'
//! rows materialized by walking the header's field ops.  Iterative.

use std::collections::HashMap;

use crate::events::{Cells, FieldOp, Sink, Table};
use crate::scalars::{float_value, FloatValue, Scalar};
use crate::DecodeError;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer beyond i64, exact (its decimal text).
    BigInt(String),
    Float(f64),
    /// A float token that overflows f64 (`1e400`): Python gives `Decimal(text)`.
    Decimal(String),
    Str(String),
    Array(Vec<Value>),
    /// Members in order (a duplicate key keeps its first position).
    Object(Vec<(String, Value)>),
}

impl From<Scalar<'_>> for Value {
    fn from(s: Scalar<'_>) -> Self {
        match s {
            Scalar::Null => Value::Null,
            Scalar::Bool(b) => Value::Bool(b),
            Scalar::Int(i) => Value::Int(i),
            Scalar::NegZero => Value::Int(0),
            Scalar::BigInt(t) => Value::BigInt(t.to_owned()),
            Scalar::Float(t) => match float_value(t) {
                FloatValue::Finite(f) => Value::Float(f),
                FloatValue::Overflow => Value::Decimal(t.to_owned()),
            },
            Scalar::Str(t) => Value::Str(t.to_owned()),
        }
    }
}

/// An object under construction: members plus, once it is big enough, an
/// index for last-write-wins.
#[derive(Default)]
struct Obj {
    members: Vec<(String, Value)>,
    index: Option<HashMap<String, usize>>,
}

const INDEX_AFTER: usize = 16;

impl Obj {
    fn put(&mut self, key: String, value: Value) {
        let found = match &self.index {
            Some(ix) => ix.get(&key).copied(),
            None => self.members.iter().position(|(k, _)| *k == key),
        };
        if let Some(i) = found {
            if let Some(slot) = self.members.get_mut(i) {
                slot.1 = value;
            }
            return;
        }
        if let Some(ix) = &mut self.index {
            ix.insert(key.clone(), self.members.len());
        }
        self.members.push((key, value));
        if self.index.is_none() && self.members.len() > INDEX_AFTER {
            let ix = self
                .members
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (k.clone(), i))
                .collect();
            self.index = Some(ix);
        }
    }
}

enum Open {
    Array(Vec<Value>),
    Object(Obj, Option<String>),
    Table(Vec<FieldOp>, Vec<Value>),
    Keyed(Vec<FieldOp>, Obj),
}

/// Builds one value from the sink calls; [`ValueBuilder::into_value`] gives it.
#[derive(Default)]
pub struct ValueBuilder {
    stack: Vec<Open>,
    value: Option<Value>,
}

impl ValueBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// The completed value (None while it is still open).
    pub fn into_value(self) -> Option<Value> {
        self.value
    }

    fn add(&mut self, v: Value) {
        match self.stack.last_mut() {
            None => self.value = Some(v),
            Some(Open::Array(items)) => items.push(v),
            Some(Open::Object(obj, key)) => obj.put(key.take().unwrap_or_default(), v),
            // (the machine sends only rows and entries inside tables)
            Some(Open::Table(_, rows)) => rows.push(v),
            Some(Open::Keyed(_, obj)) => obj.put(String::new(), v),
        }
    }

    fn close(&mut self) {
        let v = match self.stack.pop() {
            Some(Open::Array(items)) | Some(Open::Table(_, items)) => Value::Array(items),
            Some(Open::Object(obj, _)) | Some(Open::Keyed(_, obj)) => Value::Object(obj.members),
            None => return,
        };
        self.add(v);
    }
}

/// A row's object: a leaf takes the next cell, a group opens a nested object.
pub fn row_object(fields: &[FieldOp], cells: &Cells<'_>) -> Value {
    let mut stack: Vec<(Obj, String)> = vec![(Obj::default(), String::new())];
    let mut next = cells.iter();
    for op in fields {
        match op {
            FieldOp::Leaf(name) => {
                let v = next.next().map(Value::from).unwrap_or(Value::Null);
                if let Some((obj, _)) = stack.last_mut() {
                    obj.put(name.clone(), v);
                }
            }
            FieldOp::Open(name) => stack.push((Obj::default(), name.clone())),
            FieldOp::Close => {
                if stack.len() > 1 {
                    if let Some((done, name)) = stack.pop() {
                        if let Some((obj, _)) = stack.last_mut() {
                            obj.put(name, Value::Object(done.members));
                        }
                    }
                }
            }
        }
    }
    // (a well-formed op list closes every group it opens but the outermost)
    while stack.len() > 1 {
        if let Some((done, name)) = stack.pop() {
            if let Some((obj, _)) = stack.last_mut() {
                obj.put(name, Value::Object(done.members));
            }
        }
    }
    match stack.pop() {
        Some((obj, _)) => Value::Object(obj.members),
        None => Value::Object(Vec::new()),
    }
}

impl Sink for ValueBuilder {
    type Error = DecodeError;

    fn start_object(&mut self) -> Result<(), DecodeError> {
        self.stack.push(Open::Object(Obj::default(), None));
        Ok(())
    }
    fn end_object(&mut self) -> Result<(), DecodeError> {
        self.close();
        Ok(())
    }
    fn key(&mut self, key: &str) -> Result<(), DecodeError> {
        if let Some(Open::Object(_, k)) = self.stack.last_mut() {
            *k = Some(key.to_owned());
        }
        Ok(())
    }
    fn scalar(&mut self, value: Scalar<'_>) -> Result<(), DecodeError> {
        self.add(value.into());
        Ok(())
    }
    fn start_array(&mut self, _declared: u64) -> Result<(), DecodeError> {
        self.stack.push(Open::Array(Vec::new())); // never sized from the claim
        Ok(())
    }
    fn values(&mut self, values: &Cells<'_>) -> Result<(), DecodeError> {
        if let Some(Open::Array(items)) = self.stack.last_mut() {
            items.extend(values.iter().map(Value::from));
        }
        Ok(())
    }
    fn end_array(&mut self) -> Result<(), DecodeError> {
        self.close();
        Ok(())
    }
    fn start_table(&mut self, table: &Table<'_>) -> Result<(), DecodeError> {
        let fields = table.fields.to_vec();
        self.stack.push(if table.keyed {
            Open::Keyed(fields, Obj::default())
        } else {
            Open::Table(fields, Vec::new())
        });
        Ok(())
    }
    fn row(&mut self, cells: &Cells<'_>) -> Result<(), DecodeError> {
        if let Some(Open::Table(fields, rows)) = self.stack.last_mut() {
            rows.push(row_object(fields, cells));
        }
        Ok(())
    }
    fn entry(&mut self, key: &str, cells: &Cells<'_>) -> Result<(), DecodeError> {
        if let Some(Open::Keyed(fields, obj)) = self.stack.last_mut() {
            let v = row_object(fields, cells);
            obj.put(key.to_owned(), v);
        }
        Ok(())
    }
    fn end_table(&mut self, _keyed: bool) -> Result<(), DecodeError> {
        self.close();
        Ok(())
    }
}
