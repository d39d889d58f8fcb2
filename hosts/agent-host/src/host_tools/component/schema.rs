//! JSON Schemas for component types, the shape [`super::convert`] reads and writes:
//!
//! | WIT | JSON |
//! |---|---|
//! | bool, integers, floats, string | boolean, integer (with its range), number, string |
//! | char | a one-character string |
//! | list, fixed-length list | array |
//! | tuple | array of fixed length (`prefixItems`) |
//! | record | object; option fields may be left out |
//! | variant | `{"case": payload}`; a case without payload also as `"case"` |
//! | enum | one of its names |
//! | flags | array of its names |
//! | option | the value or `null` |
//! | result | `{"ok": value}` or `{"err": value}` |
//! | map with string keys | object; other keys: array of `[key, value]` |

use super::docs::DocCursor;
use serde_json::{Map, Value, json};
use wasmtime::component::Type;

/// The schema of a function's parameters: one object property per parameter, required
/// unless an option.
pub fn parameters(params: &[(String, Type)], docs: &[Option<DocCursor<'_>>]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (index, (name, ty)) in params.iter().enumerate() {
        let doc = docs.get(index).copied().flatten();
        properties.insert(name.clone(), schema(ty, doc));
        if !matches!(ty, Type::Option(_)) {
            required.push(Value::String(name.clone()));
        }
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The schema of a value of type `ty`, described from `doc` where the WIT has words.
pub fn schema(ty: &Type, doc: Option<DocCursor<'_>>) -> Value {
    let mut value = shape(ty, doc);
    if let Some(description) = doc.and_then(|d| d.description())
        && let Value::Object(object) = &mut value
    {
        object.entry("description").or_insert_with(|| description.into());
    }
    value
}

fn integer(min: i128, max: i128) -> Value {
    json!({ "type": "integer", "minimum": min, "maximum": max })
}

fn shape(ty: &Type, doc: Option<DocCursor<'_>>) -> Value {
    let inner = |i: usize| doc.and_then(|d| d.inner(i));
    match ty {
        Type::Bool => json!({ "type": "boolean" }),
        Type::S8 => integer(i8::MIN.into(), i8::MAX.into()),
        Type::U8 => integer(0, u8::MAX.into()),
        Type::S16 => integer(i16::MIN.into(), i16::MAX.into()),
        Type::U16 => integer(0, u16::MAX.into()),
        Type::S32 => integer(i32::MIN.into(), i32::MAX.into()),
        Type::U32 => integer(0, u32::MAX.into()),
        Type::S64 => integer(i64::MIN.into(), i64::MAX.into()),
        Type::U64 => integer(0, u64::MAX.into()),
        Type::Float32 | Type::Float64 => json!({ "type": "number" }),
        Type::Char => json!({ "type": "string", "minLength": 1, "maxLength": 1 }),
        Type::String => json!({ "type": "string" }),
        Type::List(list) => json!({ "type": "array", "items": schema(&list.ty(), inner(0)) }),
        Type::FixedLengthList(list) => json!({
            "type": "array",
            "items": schema(&list.ty(), inner(0)),
            "minItems": list.len(),
            "maxItems": list.len(),
        }),
        Type::Map(map) => match map.key() {
            Type::String => {
                json!({ "type": "object", "additionalProperties": schema(&map.value(), inner(1)) })
            }
            key => json!({
                "type": "array",
                "items": {
                    "type": "array",
                    "prefixItems": [schema(&key, None), schema(&map.value(), inner(1))],
                    "minItems": 2,
                    "maxItems": 2,
                },
            }),
        },
        Type::Tuple(tuple) => {
            let items: Vec<Value> = tuple
                .types()
                .enumerate()
                .map(|(i, t)| schema(&t, inner(i)))
                .collect();
            let n = items.len();
            json!({ "type": "array", "prefixItems": items, "minItems": n, "maxItems": n })
        }
        Type::Record(record) => {
            let mut properties = Map::new();
            let mut required = Vec::new();
            for (index, field) in record.fields().enumerate() {
                let (field_doc, words) = doc.and_then(|d| d.field(index, field.name)).unzip();
                let mut field_schema = schema(&field.ty, field_doc);
                if let (Some(words), Value::Object(object)) = (words.flatten(), &mut field_schema) {
                    object.insert("description".into(), words.into());
                }
                properties.insert(field.name.to_string(), field_schema);
                if !matches!(field.ty, Type::Option(_)) {
                    required.push(Value::String(field.name.to_string()));
                }
            }
            json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
        }
        Type::Variant(variant) => {
            let cases: Vec<Value> = variant
                .cases()
                .enumerate()
                .map(|(index, case)| {
                    let (payload_doc, words) = doc
                        .and_then(|d| d.case(index, case.name))
                        .map_or((None, None), |(p, w)| (p, w));
                    let payload = match &case.ty {
                        Some(ty) => schema(ty, payload_doc),
                        None => json!({ "type": "null" }),
                    };
                    let mut one = json!({
                        "type": "object",
                        "properties": { case.name: payload },
                        "required": [case.name],
                        "additionalProperties": false,
                    });
                    if let (Some(words), Value::Object(object)) = (words, &mut one) {
                        object.insert("description".into(), words.into());
                    }
                    one
                })
                .collect();
            let bare: Vec<&str> = variant
                .cases()
                .filter(|c| c.ty.is_none())
                .map(|c| c.name)
                .collect();
            let mut one_of = cases;
            if !bare.is_empty() {
                one_of.push(json!({ "type": "string", "enum": bare }));
            }
            json!({ "oneOf": one_of })
        }
        Type::Enum(names) => {
            let names: Vec<&str> = names.names().collect();
            let mut value = json!({ "type": "string", "enum": names });
            append_member_docs(&mut value, &names, doc);
            value
        }
        Type::Flags(flags) => {
            let names: Vec<&str> = flags.names().collect();
            let mut value = json!({
                "type": "array",
                "items": { "type": "string", "enum": names },
                "uniqueItems": true,
            });
            append_member_docs(&mut value, &names, doc);
            value
        }
        Type::Option(option) => json!({ "anyOf": [schema(&option.ty(), inner(0)), { "type": "null" }] }),
        Type::Result(result) => {
            let case = |name: &str, ty: Option<Type>, ok: bool| {
                let payload = match ty {
                    Some(ty) => schema(&ty, doc.and_then(|d| d.result_case(ok))),
                    None => json!({ "type": "null" }),
                };
                json!({
                    "type": "object",
                    "properties": { name: payload },
                    "required": [name],
                    "additionalProperties": false,
                })
            };
            json!({ "oneOf": [case("ok", result.ok(), true), case("err", result.err(), false)] })
        }
        // Left out by `shape::exports` before any schema is made.
        Type::Own(_) | Type::Borrow(_) | Type::Future(_) | Type::Stream(_) | Type::ErrorContext => json!({}),
    }
}

/// An enum's or flags' members' doc comments, as one description (`low: quietly; ...`).
fn append_member_docs(value: &mut Value, names: &[&str], doc: Option<DocCursor<'_>>) {
    let Some(doc) = doc else { return };
    let described: Vec<String> = names
        .iter()
        .enumerate()
        .filter_map(|(i, name)| doc.member(i, name).map(|words| format!("{name}: {words}")))
        .collect();
    if !described.is_empty()
        && let Value::Object(object) = value
    {
        let own = doc.description().map(|d| format!("{d} ")).unwrap_or_default();
        object.insert(
            "description".into(),
            format!("{own}({})", described.join("; ")).into(),
        );
    }
}
