//! Arguments from JSON to component values, results back, in the shapes
//! [`super::schema`] describes. A value that does not fit is an error naming where it is
//! (`options.top-words: expected an integer from 0 to 4294967295, got -1`), which the model
//! reads and corrects.

use serde_json::{Map, Value};
use wasmtime::component::{Type, Val};

/// The arguments object of a call, as the function's parameters in order.
pub fn arguments(params: &[(String, Type)], arguments_json: &str) -> Result<Vec<Val>, String> {
    let arguments: Value = match arguments_json.trim() {
        "" => Value::Object(Map::new()),
        text => serde_json::from_str(text).map_err(|e| format!("the arguments are not JSON: {e}"))?,
    };
    let Value::Object(mut given) = arguments else {
        return Err("the arguments must be a JSON object, one property per parameter".into());
    };
    let mut values = Vec::with_capacity(params.len());
    for (name, ty) in params {
        let value = given.remove(name).unwrap_or(Value::Null);
        if value.is_null() && !matches!(ty, Type::Option(_)) {
            return Err(format!("the parameter `{name}` is missing"));
        }
        values.push(to_val(ty, &value, name)?);
    }
    if let Some(unknown) = given.keys().next() {
        let known: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
        return Err(format!(
            "there is no parameter `{unknown}` (the parameters: {})",
            known.join(", ")
        ));
    }
    Ok(values)
}

fn kind(value: &Value) -> String {
    let text = value.to_string();
    match text.chars().count() > 40 {
        true => format!("{}...", text.chars().take(40).collect::<String>()),
        false => text,
    }
}

fn expected(at: &str, what: &str, value: &Value) -> String {
    format!("{at}: expected {what}, got {}", kind(value))
}

fn integer<T: TryFrom<i128>>(value: &Value, at: &str, min: i128, max: i128) -> Result<T, String> {
    let what = format!("an integer from {min} to {max}");
    let n = match value {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                    .map(|f| f as i128)
            }),
        // 64-bit numbers past JavaScript's 2^53 arrive as decimal strings from some clients.
        Value::String(s) => s.trim().parse::<i128>().ok(),
        _ => None,
    };
    n.filter(|n| (min..=max).contains(n))
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| expected(at, &what, value))
}

/// `value` as a value of type `ty`; `at` says where it is, for errors.
pub fn to_val(ty: &Type, value: &Value, at: &str) -> Result<Val, String> {
    Ok(match ty {
        Type::Bool => Val::Bool(
            value
                .as_bool()
                .ok_or_else(|| expected(at, "true or false", value))?,
        ),
        Type::S8 => Val::S8(integer(value, at, i8::MIN.into(), i8::MAX.into())?),
        Type::U8 => Val::U8(integer(value, at, 0, u8::MAX.into())?),
        Type::S16 => Val::S16(integer(value, at, i16::MIN.into(), i16::MAX.into())?),
        Type::U16 => Val::U16(integer(value, at, 0, u16::MAX.into())?),
        Type::S32 => Val::S32(integer(value, at, i32::MIN.into(), i32::MAX.into())?),
        Type::U32 => Val::U32(integer(value, at, 0, u32::MAX.into())?),
        Type::S64 => Val::S64(integer(value, at, i64::MIN.into(), i64::MAX.into())?),
        Type::U64 => Val::U64(integer(value, at, 0, u64::MAX.into())?),
        Type::Float32 => Val::Float32(value.as_f64().ok_or_else(|| expected(at, "a number", value))? as f32),
        Type::Float64 => Val::Float64(value.as_f64().ok_or_else(|| expected(at, "a number", value))?),
        Type::Char => {
            let text = value.as_str().unwrap_or_default();
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Val::Char(c),
                _ => return Err(expected(at, "a one-character string", value)),
            }
        }
        Type::String => Val::String(
            value
                .as_str()
                .ok_or_else(|| expected(at, "a string", value))?
                .to_string(),
        ),
        Type::List(list) => Val::List(elements(&list.ty(), value, at, None)?),
        Type::FixedLengthList(list) => {
            Val::FixedLengthList(elements(&list.ty(), value, at, Some(list.len() as usize))?)
        }
        Type::Map(map) => {
            let (key_ty, value_ty) = (map.key(), map.value());
            let pairs = match (value, &key_ty) {
                (Value::Object(object), Type::String) => object
                    .iter()
                    .map(|(k, v)| {
                        Ok((
                            Val::String(k.clone()),
                            to_val(&value_ty, v, &format!("{at}.{k}"))?,
                        ))
                    })
                    .collect::<Result<Vec<_>, String>>()?,
                (Value::Array(items), _) => items
                    .iter()
                    .enumerate()
                    .map(|(i, pair)| match pair.as_array().map(Vec::as_slice) {
                        Some([k, v]) => Ok((
                            to_val(&key_ty, k, &format!("{at}[{i}][0]"))?,
                            to_val(&value_ty, v, &format!("{at}[{i}][1]"))?,
                        )),
                        _ => Err(expected(&format!("{at}[{i}]"), "a [key, value] pair", pair)),
                    })
                    .collect::<Result<Vec<_>, String>>()?,
                _ => {
                    return Err(expected(
                        at,
                        "an object (or an array of [key, value] pairs)",
                        value,
                    ));
                }
            };
            Val::Map(pairs)
        }
        Type::Tuple(tuple) => {
            let types: Vec<Type> = tuple.types().collect();
            let items = value
                .as_array()
                .filter(|items| items.len() == types.len())
                .ok_or_else(|| expected(at, &format!("an array of {} items", types.len()), value))?;
            Val::Tuple(
                types
                    .iter()
                    .zip(items)
                    .enumerate()
                    .map(|(i, (t, v))| to_val(t, v, &format!("{at}[{i}]")))
                    .collect::<Result<_, _>>()?,
            )
        }
        Type::Record(record) => {
            let object = value
                .as_object()
                .ok_or_else(|| expected(at, "an object", value))?;
            let mut fields = Vec::new();
            for field in record.fields() {
                let inner = object.get(field.name).unwrap_or(&Value::Null);
                let where_ = format!("{at}.{}", field.name);
                if inner.is_null() && !matches!(field.ty, Type::Option(_)) {
                    return Err(format!("{where_} is missing"));
                }
                fields.push((field.name.to_string(), to_val(&field.ty, inner, &where_)?));
            }
            if let Some(unknown) = object
                .keys()
                .find(|k| !record.fields().any(|f| f.name == k.as_str()))
            {
                let known: Vec<&str> = record.fields().map(|f| f.name).collect();
                return Err(format!(
                    "{at} has no field `{unknown}` (its fields: {})",
                    known.join(", ")
                ));
            }
            Val::Record(fields)
        }
        Type::Variant(variant) => {
            let names: Vec<&str> = variant.cases().map(|c| c.name).collect();
            let what = format!("one of the cases {} as {{\"case\": value}}", names.join(", "));
            let (name, payload) = single_key(value).ok_or_else(|| expected(at, &what, value))?;
            let case = variant
                .cases()
                .find(|c| c.name == name)
                .ok_or_else(|| expected(at, &what, value))?;
            let payload = match &case.ty {
                Some(ty) => Some(Box::new(to_val(ty, payload, &format!("{at}.{name}"))?)),
                None => None,
            };
            Val::Variant(name.to_string(), payload)
        }
        Type::Enum(names) => {
            let given = value.as_str().unwrap_or_default();
            match names.names().any(|n| n == given) {
                true => Val::Enum(given.to_string()),
                false => {
                    let all: Vec<&str> = names.names().collect();
                    return Err(expected(at, &format!("one of {}", all.join(", ")), value));
                }
            }
        }
        Type::Flags(flags) => {
            let all: Vec<&str> = flags.names().collect();
            let what = format!("an array of names from {}", all.join(", "));
            let items = value.as_array().ok_or_else(|| expected(at, &what, value))?;
            let mut set = Vec::new();
            for item in items {
                match item.as_str().filter(|s| all.contains(s)) {
                    Some(name) if !set.iter().any(|s: &String| s == name) => set.push(name.to_string()),
                    Some(_) => {}
                    None => return Err(expected(at, &what, value)),
                }
            }
            Val::Flags(set)
        }
        Type::Option(option) => match value {
            Value::Null => Val::Option(None),
            inner => Val::Option(Some(Box::new(to_val(&option.ty(), inner, at)?))),
        },
        Type::Result(result) => {
            let (name, payload) = single_key(value)
                .filter(|(n, _)| *n == "ok" || *n == "err")
                .ok_or_else(|| expected(at, "{\"ok\": value} or {\"err\": value}", value))?;
            let ty = match name == "ok" {
                true => result.ok(),
                false => result.err(),
            };
            let payload = match ty {
                Some(ty) => Some(Box::new(to_val(&ty, payload, &format!("{at}.{name}"))?)),
                None => None,
            };
            Val::Result(if name == "ok" { Ok(payload) } else { Err(payload) })
        }
        Type::Own(_) | Type::Borrow(_) | Type::Future(_) | Type::Stream(_) | Type::ErrorContext => {
            return Err(format!("{at}: this type cannot be given as JSON"));
        }
    })
}

fn elements(ty: &Type, value: &Value, at: &str, length: Option<usize>) -> Result<Vec<Val>, String> {
    let what = match length {
        Some(n) => format!("an array of {n} items"),
        None => "an array".to_string(),
    };
    let items = value
        .as_array()
        .filter(|items| length.is_none_or(|n| items.len() == n))
        .ok_or_else(|| expected(at, &what, value))?;
    items
        .iter()
        .enumerate()
        .map(|(i, v)| to_val(ty, v, &format!("{at}[{i}]")))
        .collect()
}

/// `{"name": payload}`, or a bare `"name"` (no payload).
fn single_key(value: &Value) -> Option<(&str, &Value)> {
    match value {
        Value::String(name) => Some((name.as_str(), &Value::Null)),
        Value::Object(object) if object.len() == 1 => object.iter().next().map(|(k, v)| (k.as_str(), v)),
        _ => None,
    }
}

/// A component value as JSON.
pub fn to_json(value: &Val) -> Value {
    let boxed = |v: &Option<Box<Val>>| v.as_deref().map_or(Value::Null, to_json);
    match value {
        Val::Bool(b) => Value::Bool(*b),
        Val::S8(n) => (*n).into(),
        Val::U8(n) => (*n).into(),
        Val::S16(n) => (*n).into(),
        Val::U16(n) => (*n).into(),
        Val::S32(n) => (*n).into(),
        Val::U32(n) => (*n).into(),
        Val::S64(n) => (*n).into(),
        Val::U64(n) => (*n).into(),
        Val::Float32(f) => serde_json::Number::from_f64(f64::from(*f)).map_or(Value::Null, Value::Number),
        Val::Float64(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Val::Char(c) => Value::String(c.to_string()),
        Val::String(s) => Value::String(s.clone()),
        Val::List(items) | Val::Tuple(items) | Val::FixedLengthList(items) => {
            Value::Array(items.iter().map(to_json).collect())
        }
        Val::Map(pairs) => match pairs.iter().all(|(k, _)| matches!(k, Val::String(_))) {
            true => Value::Object(
                pairs
                    .iter()
                    .filter_map(|(k, v)| match k {
                        Val::String(k) => Some((k.clone(), to_json(v))),
                        _ => None,
                    })
                    .collect(),
            ),
            false => Value::Array(
                pairs
                    .iter()
                    .map(|(k, v)| Value::Array(vec![to_json(k), to_json(v)]))
                    .collect(),
            ),
        },
        Val::Record(fields) => Value::Object(fields.iter().map(|(k, v)| (k.clone(), to_json(v))).collect()),
        Val::Variant(name, payload) => {
            let mut object = Map::new();
            object.insert(name.clone(), boxed(payload));
            Value::Object(object)
        }
        Val::Enum(name) => Value::String(name.clone()),
        Val::Flags(names) => Value::Array(names.iter().cloned().map(Value::String).collect()),
        Val::Option(inner) => boxed(inner),
        Val::Result(Ok(v)) => serde_json::json!({ "ok": boxed(v) }),
        Val::Result(Err(v)) => serde_json::json!({ "err": boxed(v) }),
        Val::Resource(_) | Val::Future(_) | Val::Stream(_) | Val::ErrorContext(_) => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_become_json_in_the_documented_shapes() {
        let report = Val::Record(vec![
            ("path".into(), Val::String("a.txt".into())),
            ("lines".into(), Val::Option(Some(Box::new(Val::U64(3))))),
            ("words".into(), Val::Option(None)),
            ("kind".into(), Val::Enum("text".into())),
            (
                "found".into(),
                Val::Variant("file".into(), Some(Box::new(Val::String("x".into())))),
            ),
            ("flags".into(), Val::Flags(vec!["lines".into()])),
            (
                "pair".into(),
                Val::Tuple(vec![Val::Char('é'), Val::Float64(f64::NAN)]),
            ),
            (
                "outcome".into(),
                Val::Result(Err(Some(Box::new(Val::String("no".into()))))),
            ),
        ]);
        assert_eq!(
            to_json(&report),
            serde_json::json!({
                "path": "a.txt", "lines": 3, "words": null, "kind": "text", "found": {"file": "x"},
                "flags": ["lines"], "pair": ["é", null], "outcome": {"err": "no"},
            })
        );
    }

    #[test]
    fn integers_are_checked_against_their_range() {
        assert_eq!(integer::<u32>(&serde_json::json!(7), "n", 0, 10).unwrap(), 7);
        assert_eq!(
            integer::<u64>(
                &serde_json::json!("18446744073709551615"),
                "n",
                0,
                u64::MAX.into()
            )
            .unwrap(),
            u64::MAX
        );
        let error = integer::<u32>(&serde_json::json!(-1), "options.top", 0, 10).unwrap_err();
        assert_eq!(error, "options.top: expected an integer from 0 to 10, got -1");
        assert!(integer::<u8>(&serde_json::json!(1.5), "n", 0, 255).is_err());
    }
}
