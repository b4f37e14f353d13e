//! Test-only proptest strategies: random types and values of every type,
//! shared by the property tests of the codecs and the text/binary I/O.

use proptest::prelude::*;

use crate::array::{ArrayValue, Dim};
use crate::datetime;
use crate::numeric::Numeric;
use crate::text::fit_string;
use crate::{DataType, Value};

/// Any concrete column type (no `unknown`), with small length modifiers.
pub fn data_type() -> impl Strategy<Value = DataType> {
    prop_oneof![
        12 => scalar_type(),
        1 => scalar_type().prop_map(|t| t.array_of()),
        1 => prop::collection::vec(scalar_type(), 1..4)
            .prop_map(|f| DataType::Record(crate::RecordType::anonymous(f))),
    ]
}

fn scalar_type() -> impl Strategy<Value = DataType> {
    prop_oneof![
        Just(DataType::Bool),
        Just(DataType::Int2),
        Just(DataType::Int4),
        Just(DataType::Int8),
        Just(DataType::Float8),
        Just(DataType::Numeric(None)),
        Just(DataType::Text),
        Just(DataType::Varchar(None)),
        Just(DataType::Char(4)),
        Just(DataType::Timestamp),
        Just(DataType::TimestampTz),
        Just(DataType::Date),
        Just(DataType::Bytea),
        Just(DataType::Oid),
        Just(DataType::Int2Vector),
        Just(DataType::Float4),
        Just(DataType::Time),
        Just(DataType::TimeTz),
        Just(DataType::Interval),
        Just(DataType::Uuid),
        Just(DataType::Inet),
        Just(DataType::Cidr),
        // json has no ordering (nor equality) in PostgreSQL; its codecs
        // are those of text.
        Just(DataType::Jsonb),
        prop::sample::select(crate::range::RANGE_KINDS.to_vec()).prop_map(DataType::Range),
    ]
}

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => any::<f64>(),
        2 => (-1000i32..1000).prop_map(|i| i as f64 / 8.0),
        1 => prop::sample::select(vec![
            f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, f64::MIN_POSITIVE, f64::MAX, 5e-324,
        ]),
    ]
}

fn numeric() -> impl Strategy<Value = Numeric> {
    prop_oneof![
        8 => (any::<i64>(), 0i64..12, 0i64..3).prop_map(|(m, s, big)| {
            // Some values get a long tail of digits or a large exponent.
            let text = if big == 0 { format!("{m}e-{s}") } else { format!("{m}{}e{}", "7".repeat(25), s * 3) };
            Numeric::parse(&text).expect("generated numeric is valid")
        }),
        1 => prop::sample::select(vec![Numeric::NaN, Numeric::PosInf, Numeric::NegInf, Numeric::from_i64(0)]),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(any::<char>(), 0..6).prop_map(String::from_iter),
        prop::collection::vec(prop::sample::select(vec!['a', 'b', ' ', '\0', '\u{1}', 'é']), 0..6)
            .prop_map(String::from_iter),
    ]
}

fn date() -> impl Strategy<Value = i32> {
    // 4714-11-24 BC .. 5874897-12-31, plus the infinities.
    prop_oneof![
        8 => -2_451_545i32..2_145_031_949,
        4 => -40_000i32..40_000,
        1 => prop::sample::select(vec![datetime::DATE_NEG_INFINITY, datetime::DATE_POS_INFINITY]),
    ]
}

fn timestamp() -> impl Strategy<Value = i64> {
    prop_oneof![
        8 => datetime::MIN_TIMESTAMP..datetime::END_TIMESTAMP,
        4 => -4_000_000_000_000_000i64..4_000_000_000_000_000,
        1 => prop::sample::select(vec![datetime::TS_NEG_INFINITY, datetime::TS_POS_INFINITY]),
    ]
}

fn json() -> impl Strategy<Value = crate::Json> {
    use crate::Json;
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        numeric().prop_filter("finite", |n| !n.is_nan() && !n.is_infinite()).prop_map(Json::Number),
        text().prop_filter("no NUL", |s| !s.contains('\0')).prop_map(Json::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
            prop::collection::vec(
                (text().prop_filter("no NUL", |s| !s.contains('\0')), inner),
                0..4
            )
            .prop_map(|mut pairs| {
                crate::json::canonicalize(&mut pairs);
                Json::Object(pairs)
            }),
        ]
    })
}

/// A non-NULL value of `ty`, stored the way a column of `ty` stores it
/// (char(n) blank-padded).
pub fn value(ty: &DataType) -> BoxedStrategy<Value> {
    match ty {
        DataType::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        DataType::Int2 => any::<i16>().prop_map(Value::Int2).boxed(),
        DataType::Int4 => any::<i32>().prop_map(Value::Int4).boxed(),
        DataType::Int8 => any::<i64>().prop_map(Value::Int8).boxed(),
        DataType::Oid => any::<u32>().prop_map(Value::Oid).boxed(),
        DataType::Enum(t) => {
            let t = t.clone();
            (0..t.labels.len().max(1))
                .prop_map(move |i| match t.labels.get(i) {
                    Some(l) => crate::enums::from_label_oid(&t, l.oid).unwrap_or(Value::Null),
                    None => Value::Null,
                })
                .boxed()
        }
        DataType::Reg(_) => any::<u32>()
            .prop_map(|o| {
                crate::cast::cast(Value::Oid(o), &DataType::Reg(crate::RegKind::Class))
                    .unwrap_or(Value::Null)
            })
            .boxed(),
        DataType::Float8 => float().prop_map(Value::Float8).boxed(),
        DataType::Float4 => float().prop_map(|f| Value::Float4(f as f32)).boxed(),
        DataType::Time => (0..=datetime::USECS_PER_DAY).prop_map(Value::Time).boxed(),
        DataType::TimeTz => (0..=datetime::USECS_PER_DAY, -57_599i32..57_600)
            .prop_map(|(t, z)| Value::TimeTz(t, z))
            .boxed(),
        DataType::Interval => (any::<i32>(), any::<i32>(), any::<i64>())
            .prop_map(|(months, days, micros)| {
                Value::Interval(crate::Interval { months, days, micros })
            })
            .boxed(),
        DataType::Uuid => any::<[u8; 16]>().prop_map(Value::Uuid).boxed(),
        DataType::Inet | DataType::Cidr => {
            let cidr = *ty == DataType::Cidr;
            (any::<bool>(), any::<[u8; 16]>(), any::<u8>())
                .prop_map(move |(v6, b, bits)| {
                    let (addr, max) = match v6 {
                        true => (std::net::IpAddr::from(b), 128),
                        false => (std::net::IpAddr::from([b[0], b[1], b[2], b[3]]), 32),
                    };
                    let v = crate::inet::Inet { addr, bits: bits % (max + 1), cidr: false };
                    Value::Inet(if cidr { v.network() } else { v })
                })
                .boxed()
        }
        DataType::Json => json().prop_map(|j| Value::Json(j.to_text())).boxed(),
        DataType::Jsonb => json().prop_map(|j| Value::Jsonb(Box::new(j))).boxed(),
        DataType::Numeric(_) => numeric().prop_map(Value::Numeric).boxed(),
        DataType::Char(n) => {
            let ty = DataType::Char(*n);
            prop::collection::vec(
                prop::sample::select(vec!['a', 'b', ' ', '\u{1}', 'é']),
                0..=*n as usize,
            )
            .prop_map(move |c| Value::Text(fit_string(&String::from_iter(c), &ty).expect("fits")))
            .boxed()
        }
        DataType::Text | DataType::Varchar(_) | DataType::Unknown | DataType::Refcursor => {
            text().prop_map(Value::Text).boxed()
        }
        DataType::Name => text().prop_map(|s| Value::Text(crate::text::name(&s))).boxed(),
        DataType::Void => Just(Value::Text(String::new())).boxed(),
        DataType::Timestamp => timestamp().prop_map(Value::Timestamp).boxed(),
        DataType::TimestampTz => timestamp().prop_map(Value::TimestampTz).boxed(),
        DataType::Date => date().prop_map(Value::Date).boxed(),
        DataType::Bytea => prop::collection::vec(any::<u8>(), 0..8).prop_map(Value::Bytea).boxed(),
        DataType::QChar => prop::sample::select(vec!["a", "r", "Z", " "])
            .prop_map(|c| Value::Text(c.to_string()))
            .boxed(),
        DataType::Int2Vector | DataType::OidVector => {
            let elem = ty.elem().cloned().unwrap_or(DataType::Int2);
            prop::collection::vec(value(&elem), 0..4)
                .prop_map(move |items| crate::array::vector(elem.clone(), items))
                .boxed()
        }
        DataType::Array(elem) => {
            let elem = (**elem).clone();
            (
                prop::collection::vec(nullable(&elem), 0..5),
                prop::sample::select(vec![1, 1, 0, -3]),
                any::<bool>(),
            )
                .prop_map(move |(items, lower, square)| {
                    let mut a = ArrayValue::new(elem.clone(), items);
                    let n = a.items.len() as i32;
                    if square && n >= 2 && n % 2 == 0 {
                        a.dims = vec![Dim { len: 2, lower }, Dim { len: n / 2, lower: 1 }];
                    } else if let Some(d) = a.dims.first_mut() {
                        d.lower = lower;
                    }
                    a.into_value()
                })
                .boxed()
        }
        DataType::Range(k) => {
            let k = *k;
            let sub = k.subtype();
            (nullable(&sub), nullable(&sub), any::<[bool; 3]>())
                .prop_map(move |(a, b, [a_inc, b_inc, empty])| {
                    use crate::range::{make, Bound};
                    // NULL stands for an infinite bound here.
                    let swap = !a.is_null() && !b.is_null() && crate::ops::sort_cmp(&a, &b).is_gt();
                    let (a, b) = if swap { (b, a) } else { (a, b) };
                    let bound = |v: Value, inclusive| Bound {
                        value: Some(v).filter(|v| !v.is_null()),
                        inclusive,
                    };
                    let (lower, upper) = (bound(a, a_inc), bound(b, b_inc));
                    make(k, lower, upper, empty).unwrap_or(crate::RangeValue::empty(k)).into_value()
                })
                .boxed()
        }
        DataType::Record(t) => {
            let t = t.clone();
            let fields: Vec<_> = t.fields.iter().map(|(_, f)| nullable(f)).collect();
            fields.prop_map(move |values| crate::RecordValue::value(t.clone(), values)).boxed()
        }
    }
}

/// A value of `ty` or NULL.
pub fn nullable(ty: &DataType) -> BoxedStrategy<Value> {
    prop_oneof![1 => Just(Value::Null), 6 => value(ty)].boxed()
}

/// A type with two values of it (either may be NULL).
pub fn typed_pair() -> impl Strategy<Value = (DataType, Value, Value)> {
    data_type().prop_flat_map(|t| (Just(t.clone()), nullable(&t), nullable(&t)))
}

/// A row: 0..8 types with one value each (any may be NULL).
pub fn row() -> impl Strategy<Value = (Vec<DataType>, Vec<Value>)> {
    prop::collection::vec(data_type(), 0..8).prop_flat_map(|types| {
        let values: Vec<BoxedStrategy<Value>> = types.iter().map(nullable).collect();
        (Just(types), values)
    })
}

/// Two rows of the same types, for order tests.
pub fn row_pair() -> impl Strategy<Value = (Vec<DataType>, Vec<Value>, Vec<Value>)> {
    prop::collection::vec(data_type(), 1..4).prop_flat_map(|types| {
        let a: Vec<BoxedStrategy<Value>> = types.iter().map(nullable).collect();
        let b: Vec<BoxedStrategy<Value>> = types.iter().map(nullable).collect();
        (Just(types), a, b)
    })
}

/// Exact identity for round-trip checks: same kind and same text form
/// (so NaN equals NaN, -0 differs from 0, and 1.50 differs from 1.5).
pub fn same(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
        && crate::text::to_text(a) == crate::text::to_text(b)
}
