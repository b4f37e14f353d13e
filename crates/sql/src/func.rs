//! Built-in scalar functions: name resolution, result types and evaluation.
//!
//! Resolution happens once at bind time ([`resolve`]), which picks the
//! [`Func`] and its result type from the argument types, so evaluation does
//! no lookups. Aggregates live in `plan::AggFunc`, not here.

use sqltypes::{cast, ops, DataType, Numeric, Value};

use crate::error::Result;
use crate::expr::EvalContext;
use crate::{bail, err};

// Advisory lock functions (pg_advisory_lock, ...).
pub mod advisory;
// md5, sha256 and friends, encode and decode.
pub mod digests;
// pg_cancel_backend, pg_terminate_backend, pg_notify, pg_sleep.
pub mod server;
// Array functions and operators.
pub mod arrays;
// Functions that read the catalog (pg_get_constraintdef, format_type, ...).
pub(crate) mod catalog_info;
// Date and time functions (extract, date_trunc, age, ...).
pub mod datetime;
// to_char for numbers; to_date and to_timestamp by template.
pub mod formatting;
// json and jsonb functions and operators.
pub mod json;
// POSIX regular expression functions (regexp_replace, regexp_match, ...).
pub mod regex;
// has_table_privilege and the other privilege inquiry functions.
pub mod privileges;
// exp, ln, log, the trigonometric functions, gcd, width_bucket, ...
pub mod math;
// format, concat_ws, translate and other string functions.
pub mod strings;
// inet and cidr functions and operators.
pub mod network;
// Range constructors, functions and operators.
pub mod ranges;
// The pgcrypto extension's functions (digest, hmac, crypt, gen_salt, ...).
pub mod pgcrypto;
// The uuid-ossp extension's functions (uuid_generate_v1, _v4, ...).
pub mod uuid_ossp;

/// The transaction-time values that take a precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// current_timestamp
    Timestamp,
    /// localtimestamp
    LocalTimestamp,
    /// current_time
    Time,
    /// localtime
    LocalTime,
}

/// The size functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeFunc {
    /// pg_relation_size(regclass [, fork]) and pg_table_size(regclass)
    Relation,
    /// pg_indexes_size(regclass)
    Indexes,
    /// pg_total_relation_size(regclass)
    Total,
    /// pg_database_size(name | oid)
    Database,
    /// pg_size_pretty(bigint | numeric)
    Pretty,
    /// pg_size_bytes(text): a pg_size_pretty-style size in bytes
    Bytes,
}

/// A resolved built-in scalar function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    /// `VARIADIC array` as a variadic built-in's last argument: the
    /// array's elements are the call's last arguments (see `Expr::eval`).
    Spread,
    /// A cast to `timestamp(p)`, `time(p)`, `interval(p)` ...: the value
    /// rounded to the precision (the second argument).
    TimePrecision,
    /// `(s1, e1) OVERLAPS (s2, e2)` over four values of one type (an
    /// interval end already added to its start).
    Overlaps,
    /// now(), CURRENT_TIMESTAMP, transaction_timestamp()
    Now,
    /// statement_timestamp()
    StatementTimestamp,
    /// clock_timestamp()
    ClockTimestamp,
    /// CURRENT_DATE
    CurrentDate,
    /// LOCALTIMESTAMP
    LocalTimestamp,
    /// `x AT TIME ZONE zone`, timezone(zone, x): a timestamptz as the
    /// zone's wall-clock time, or a timestamp read as the zone's.
    Timezone,
    /// abs(x)
    Abs,
    /// length(text), char_length
    Length,
    /// octet_length(text)
    OctetLength,
    /// lower(text)
    Lower,
    /// upper(text)
    Upper,
    /// coalesce(...)
    Coalesce,
    /// nullif(a, b)
    NullIf,
    /// greatest(...)
    Greatest,
    /// least(...)
    Least,
    /// substr(s, from [, len])
    Substr,
    /// btrim(s)
    Trim,
    /// round(x [, scale])
    Round,
    /// floor(x)
    Floor,
    /// ceil(x)
    Ceil,
    /// trunc(x [, scale]): rounds toward zero
    Trunc,
    /// sign(x): -1, 0 or 1 (NaN stays NaN)
    Sign,
    /// random()
    Random,
    /// setseed(seed)
    SetSeed,
    /// version()
    Version,
    /// current_database()
    CurrentDatabase,
    /// pg_get_constraintdef(oid [, pretty])
    ConstraintDef,
    /// pg_get_indexdef(oid [, column, pretty])
    IndexDef,
    /// pg_get_serial_sequence(table, column)
    SerialSequence,
    /// pg_table_is_visible(oid)
    TableIsVisible,
    /// pg_get_userbyid(role oid)
    UserById,
    /// pg_get_viewdef(view [, pretty]): the view's query
    ViewDef,
    /// quote_ident(text)
    QuoteIdent,
    /// quote_literal(x) and quote_nullable(x) (the flag: NULL gives `NULL`)
    QuoteLiteral(bool),
    /// acldefault(object kind, owner oid): the privileges an owner has by
    /// default, as aclitem text
    AclDefault,
    /// pg_get_function_result/arguments/identity_arguments/sqlbody(oid)
    /// and pg_function_is_visible(oid)
    ProcInfo(catalog_info::ProcInfo),
    /// format_type(type oid, typmod)
    FormatType,
    /// pg_get_triggerdef(oid [, pretty])
    TriggerDef,
    /// obj_description(oid [, catalog]): a table's COMMENT
    ObjDescription,
    /// pg_describe_object(classid, objid, objsubid): an object's name in
    /// messages
    DescribeObject,
    /// col_description(table oid, column number): a column's COMMENT
    ColDescription,
    /// shobj_description: the database's comment (no other shared object
    /// has one)
    Description,
    /// pg_get_expr(expression, relation [, pretty]): the expression's text
    GetExpr,
    /// pg_get_partkeydef(table): a partitioned table's PARTITION BY
    PartKeyDef,
    /// current_user, user, current_role; session_user (the flag)
    CurrentUser(bool),
    /// current_schema()
    CurrentSchema,
    /// pg_backend_pid()
    BackendPid,
    /// current_schemas(include_implicit): the search path as an array
    /// (text[]; PostgreSQL's is name[]).
    CurrentSchemas,
    /// An array function or operator.
    Array(arrays::ArrayFunc),
    /// pg_type_is_visible(oid)
    TypeIsVisible,
    /// A date/time function.
    Date(datetime::DateFunc),
    /// A json or jsonb function or operator.
    Json(json::JsonFunc),
    /// A regular expression function (func/regex.rs)
    Regex(regex::RegexFunc),
    /// An advisory lock function (func/advisory.rs)
    Advisory(advisory::AdvisoryFunc),
    /// A function on the server's sessions, or a wait (func/server.rs)
    Server(server::ServerFunc),
    /// A hash or binary encoding (func/digests.rs)
    Digest(digests::DigestFunc),
    /// A size function (measured per statement, see sizes.rs)
    Size(SizeFunc),
    /// A mathematical function (func/math.rs)
    Math(math::MathFunc),
    /// A string function (func/strings.rs)
    Str(strings::StringFunc),
    /// An inet or cidr function or operator (func/network.rs)
    Net(network::NetFunc),
    /// A range function or operator (func/ranges.rs)
    Range(ranges::RangeFunc),
    /// A privilege inquiry function (func/privileges.rs)
    Privilege(privileges::PrivilegeFunc),
    /// A function of the uuid-ossp extension (func/uuid_ossp.rs)
    Uuid(uuid_ossp::UuidFunc),
    /// A function of the pgcrypto extension (func/pgcrypto.rs)
    Crypto(pgcrypto::CryptoFunc),
    /// gen_random_uuid()
    GenRandomUuid,
    /// chr(code)
    Chr,
    /// pg_encoding_to_char(encoding)
    EncodingName,
    /// pg_is_in_recovery(): false
    InRecovery,
    /// current_time (with the zone's offset) and localtime: the
    /// transaction's start time of day in the session's zone
    CurrentTime(bool),
    /// current_timestamp(p), localtimestamp(p), current_time(p),
    /// localtime(p): the value rounded to p fractional digits
    Precision(Clock),
    /// txid_current(), pg_current_xact_id(): the transaction's id
    TxId,
    /// pg_postmaster_start_time(), pg_conf_load_time(): when the SQL
    /// process started
    StartTime,
    /// pg_client_encoding(): UTF8
    ClientEncoding,
    /// pg_operator_is_visible and the other *_is_visible functions of
    /// object kinds Strata does not have: true
    AlwaysVisible,
    /// pg_tablespace_location(oid): empty (the built-in tablespaces)
    TablespaceLocation,
    /// pg_get_functiondef(oid)
    FunctionDef,
    /// timeofday(): the current time as text
    TimeOfDay,
    /// set_config(name, value, is_local): changes a setting when the
    /// statement finishes (with is_local, until the transaction ends)
    SetConfig,
    /// ascii(s)
    Ascii,
    /// A cast to regclass/regtype, or to_regclass/to_regtype (lenient:
    /// NULL for a name that names nothing).
    ToReg(sqltypes::RegKind, bool),
    /// strpos(s, sub), position(sub in s)
    StrPos,
    /// left(s, n)
    Left,
    /// right(s, n)
    Right,
    /// lpad(s, n [, fill])
    LPad,
    /// rpad(s, n [, fill])
    RPad,
    /// ltrim(s [, chars])
    LTrim,
    /// rtrim(s [, chars])
    RTrim,
    /// btrim(s, chars)
    BTrimChars,
    /// split_part(s, delim, n)
    SplitPart,
    /// reverse(s)
    Reverse,
    /// initcap(s)
    InitCap,
    /// starts_with(s, prefix)
    StartsWith,
    /// current_setting(name [, missing_ok])
    CurrentSetting,
    /// Internal: strips trailing blanks, so char(n) compares as bpchar does.
    BpcharTrim,
    /// concat(...)
    Concat,
    /// repeat(s, n)
    Repeat,
    /// replace(s, from, to)
    Replace,
    /// mod(a, b)
    Mod,
    /// nextval(sequence)
    NextVal,
    /// currval(sequence)
    CurrVal,
    /// setval(sequence, value [, is_called])
    SetVal,
    /// lastval()
    LastVal,
}

/// Resolves `name(args)`; returns the function and its result type.
pub fn resolve(name: &str, args: &[DataType]) -> Result<(Func, DataType)> {
    use DataType as T;
    let first = args.first().cloned().unwrap_or(T::Unknown);
    let n = args.len();
    let (f, ty) = match (name, n) {
        ("now" | "transaction_timestamp" | "current_timestamp", 0) => (Func::Now, T::TimestampTz),
        ("localtimestamp", 0) => (Func::LocalTimestamp, T::Timestamp),
        ("statement_timestamp", 0) => (Func::StatementTimestamp, T::TimestampTz),
        ("clock_timestamp", 0) => (Func::ClockTimestamp, T::TimestampTz),
        ("current_date", 0) => (Func::CurrentDate, T::Date),
        ("current_time", 0) => (Func::CurrentTime(true), T::TimeTz),
        ("localtime", 0) => (Func::CurrentTime(false), T::Time),
        ("current_timestamp", 1) => (Func::Precision(Clock::Timestamp), T::TimestampTz),
        ("localtimestamp", 1) => (Func::Precision(Clock::LocalTimestamp), T::Timestamp),
        ("current_time", 1) => (Func::Precision(Clock::Time), T::TimeTz),
        ("localtime", 1) => (Func::Precision(Clock::LocalTime), T::Time),
        ("abs", 1) if first.is_numeric() => (Func::Abs, first),
        ("length" | "octet_length", 1) if first == T::Bytea => (Func::OctetLength, T::Int4),
        ("length" | "char_length" | "character_length", 1) => (Func::Length, T::Int4),
        ("octet_length", 1) => (Func::OctetLength, T::Int4),
        ("lower", 1) => (Func::Lower, T::Text),
        ("upper", 1) => (Func::Upper, T::Text),
        ("coalesce", 1..) => (Func::Coalesce, common(args)?),
        ("nullif", 2) => (Func::NullIf, first),
        ("greatest", 1..) => (Func::Greatest, common(args)?),
        ("least", 1..) => (Func::Least, common(args)?),
        ("substr" | "substring", 2 | 3) => (Func::Substr, T::Text),
        ("btrim" | "trim", 1) => (Func::Trim, T::Text),
        ("btrim", 2) => (Func::BTrimChars, T::Text),
        ("strpos", 2) => (Func::StrPos, T::Int4),
        ("left", 2) => (Func::Left, T::Text),
        ("right", 2) => (Func::Right, T::Text),
        ("lpad", 2 | 3) => (Func::LPad, T::Text),
        ("rpad", 2 | 3) => (Func::RPad, T::Text),
        ("ltrim", 1 | 2) => (Func::LTrim, T::Text),
        ("rtrim", 1 | 2) => (Func::RTrim, T::Text),
        ("split_part", 3) => (Func::SplitPart, T::Text),
        ("reverse", 1) => (Func::Reverse, T::Text),
        ("initcap", 1) => (Func::InitCap, T::Text),
        ("starts_with", 2) => (Func::StartsWith, T::Bool),
        // Each exists for numeric and float8; any other argument (integers,
        // unknown literals) goes to float8, the preferred numeric type, as in
        // PostgreSQL. The two-argument forms are numeric only.
        ("round" | "floor" | "ceil" | "ceiling" | "trunc" | "sign", 1) => {
            let f = match name {
                "round" => Func::Round,
                "floor" => Func::Floor,
                "trunc" => Func::Trunc,
                "sign" => Func::Sign,
                _ => Func::Ceil,
            };
            let ty = if matches!(first, T::Numeric(_)) { T::Numeric(None) } else { T::Float8 };
            (f, ty)
        }
        ("round", 2) => (Func::Round, T::Numeric(None)),
        ("trunc", 2) => (Func::Trunc, T::Numeric(None)),
        ("random", 0) => (Func::Random, T::Float8),
        ("setseed", 1) => (Func::SetSeed, T::Void),
        ("version", 0) => (Func::Version, T::Text),
        ("current_database" | "current_catalog", 0) => (Func::CurrentDatabase, T::Text),
        ("pg_get_constraintdef", 1 | 2) => (Func::ConstraintDef, T::Text),
        ("pg_get_indexdef", 1 | 3) => (Func::IndexDef, T::Text),
        ("pg_get_serial_sequence", 2) => (Func::SerialSequence, T::Text),
        // Every table Strata has is visible and publishable.
        ("pg_table_is_visible" | "pg_relation_is_publishable", 1) => {
            (Func::TableIsVisible, T::Bool)
        }
        // Every type is in pg_catalog, which is always on the search path.
        ("pg_type_is_visible", 1) => (Func::TypeIsVisible, T::Bool),
        ("pg_get_userbyid", 1) => (Func::UserById, T::Text),
        ("acldefault", 2) => (Func::AclDefault, T::Text.array_of()),
        ("quote_ident", 1) => (Func::QuoteIdent, T::Text),
        ("pg_get_viewdef", 1 | 2) => (Func::ViewDef, T::Text),
        ("quote_literal", 1) => (Func::QuoteLiteral(false), T::Text),
        ("quote_nullable", 1) => (Func::QuoteLiteral(true), T::Text),
        ("format_type", 2) => (Func::FormatType, T::Text),
        ("obj_description", 1 | 2) => (Func::ObjDescription, T::Text),
        ("pg_relation_size", 1 | 2) | ("pg_table_size", 1) => {
            (Func::Size(SizeFunc::Relation), T::Int8)
        }
        ("pg_indexes_size", 1) => (Func::Size(SizeFunc::Indexes), T::Int8),
        ("pg_total_relation_size", 1) => (Func::Size(SizeFunc::Total), T::Int8),
        ("pg_database_size", 1) => (Func::Size(SizeFunc::Database), T::Int8),
        ("pg_size_pretty", 1) => (Func::Size(SizeFunc::Pretty), T::Text),
        ("pg_size_bytes", 1) => (Func::Size(SizeFunc::Bytes), T::Int8),
        ("pg_describe_object", 3) => (Func::DescribeObject, T::Text),
        ("col_description", 2) => (Func::ColDescription, T::Text),
        ("shobj_description", 2) => (Func::Description, T::Text),
        ("pg_get_expr", 2 | 3) => (Func::GetExpr, T::Text),
        ("pg_get_partkeydef", 1) => (Func::PartKeyDef, T::Text),
        ("current_user" | "user" | "current_role", 0) => (Func::CurrentUser(false), T::Text),
        ("session_user", 0) => (Func::CurrentUser(true), T::Text),
        ("current_schema", 0) => (Func::CurrentSchema, T::Text),
        ("pg_backend_pid", 0) => (Func::BackendPid, T::Int4),
        ("current_schemas", 1) => (Func::CurrentSchemas, T::Text.array_of()),
        ("current_setting", 1 | 2) => (Func::CurrentSetting, T::Text),
        ("to_regclass", 1) => {
            (Func::ToReg(sqltypes::RegKind::Class, true), T::Reg(sqltypes::RegKind::Class))
        }
        ("to_regprocedure", 1) => {
            (Func::ToReg(sqltypes::RegKind::Procedure, true), T::Reg(sqltypes::RegKind::Procedure))
        }
        ("to_regrole", 1) => {
            (Func::ToReg(sqltypes::RegKind::Role, true), T::Reg(sqltypes::RegKind::Role))
        }
        ("to_regnamespace", 1) => {
            (Func::ToReg(sqltypes::RegKind::Namespace, true), T::Reg(sqltypes::RegKind::Namespace))
        }
        // Statistics objects Strata does not have: pg_statistic_ext is
        // empty, so this never meets one.
        ("pg_get_statisticsobjdef_columns", 1) => (Func::Description, T::Text),
        ("pg_get_triggerdef", 1 | 2) => (Func::TriggerDef, T::Text),
        ("pg_get_function_result", 1) => (Func::ProcInfo(catalog_info::ProcInfo::Result), T::Text),
        ("pg_get_function_arguments", 1) => {
            (Func::ProcInfo(catalog_info::ProcInfo::Arguments), T::Text)
        }
        ("pg_get_function_identity_arguments", 1) => {
            (Func::ProcInfo(catalog_info::ProcInfo::IdentityArguments), T::Text)
        }
        ("pg_get_function_sqlbody", 1) => {
            (Func::ProcInfo(catalog_info::ProcInfo::SqlBody), T::Text)
        }
        ("pg_function_is_visible", 1) => (Func::ProcInfo(catalog_info::ProcInfo::Visible), T::Bool),
        ("to_regproc", 1) => {
            (Func::ToReg(sqltypes::RegKind::Proc, true), T::Reg(sqltypes::RegKind::Proc))
        }
        ("to_regtype", 1) => {
            (Func::ToReg(sqltypes::RegKind::Type, true), T::Reg(sqltypes::RegKind::Type))
        }
        ("concat", _) => (Func::Concat, T::Text),
        ("gen_random_uuid", 0) => (Func::GenRandomUuid, T::Uuid),
        ("chr", 1) => (Func::Chr, T::Text),
        ("pg_encoding_to_char", 1) => (Func::EncodingName, T::Text),
        ("set_config", 3) => (Func::SetConfig, T::Text),
        // A Strata SQL process is never a recovering standby.
        ("pg_is_in_recovery", 0) => (Func::InRecovery, T::Bool),
        ("txid_current" | "pg_current_xact_id", 0) => (Func::TxId, T::Int8),
        ("pg_postmaster_start_time" | "pg_conf_load_time", 0) => (Func::StartTime, T::TimestampTz),
        ("pg_client_encoding", 0) => (Func::ClientEncoding, T::Text),
        // Strata has no objects of these kinds (their catalogs are
        // empty), so whatever is asked about is visible.
        (
            "pg_operator_is_visible"
            | "pg_opclass_is_visible"
            | "pg_opfamily_is_visible"
            | "pg_collation_is_visible"
            | "pg_conversion_is_visible"
            | "pg_statistics_obj_is_visible"
            | "pg_ts_parser_is_visible"
            | "pg_ts_dict_is_visible"
            | "pg_ts_template_is_visible"
            | "pg_ts_config_is_visible",
            1,
        ) => (Func::AlwaysVisible, T::Bool),
        ("pg_tablespace_location", 1) => (Func::TablespaceLocation, T::Text),
        ("pg_get_functiondef", 1) => (Func::FunctionDef, T::Text),
        ("timeofday", 0) => (Func::TimeOfDay, T::Text),
        ("ascii", 1) => (Func::Ascii, T::Int4),
        ("repeat", 2) => (Func::Repeat, T::Text),
        ("replace", 3) => (Func::Replace, T::Text),
        ("mod", 2) => (Func::Mod, common(args)?),
        ("nextval", 1) => (Func::NextVal, T::Int8),
        ("currval", 1) => (Func::CurrVal, T::Int8),
        ("setval", 2 | 3) => (Func::SetVal, T::Int8),
        ("lastval", 0) => (Func::LastVal, T::Int8),
        _ => return Err(no_such_function(name, args)),
    };
    Ok((f, ty))
}

/// PostgreSQL's 42725 for a call more than one function matches equally.
pub fn ambiguous_function(name: &str, args: &[DataType]) -> crate::error::Error {
    let list: Vec<String> = args.iter().map(|t| t.to_string()).collect();
    err!(AmbiguousFunction, "function {name}({}) is not unique", list.join(", ")).with_hint(
        "Could not choose a best candidate function. You might need to add explicit type casts.",
    )
}

/// PostgreSQL's 42883 for a call no function matches.
pub fn no_such_function(name: &str, args: &[DataType]) -> crate::error::Error {
    let list: Vec<String> = args.iter().map(|t| t.to_string()).collect();
    no_such_call(name, &list)
}

/// 42883 for a call whose arguments are shown as `list` (types, or
/// `name => type`).
pub fn no_such_call(name: &str, list: &[String]) -> crate::error::Error {
    err!(UndefinedFunction, "function {name}({}) does not exist", list.join(", ")).with_hint(
        "No function matches the given name and argument types. You might need to add explicit type casts.",
    )
}

/// The types each argument should be coerced to before the call (None: as is).
pub fn arg_target(f: Func, result: &DataType, i: usize) -> Option<DataType> {
    match f {
        Func::Coalesce | Func::Greatest | Func::Least | Func::Mod => Some(result.clone()),
        Func::CurrentSetting => Some([DataType::Text, DataType::Bool][i.min(1)].clone()),
        Func::Ascii | Func::QuoteIdent | Func::QuoteLiteral(_) => Some(DataType::Text),
        Func::AclDefault => Some([DataType::Text, DataType::Int8][i.min(1)].clone()),
        Func::Chr | Func::EncodingName => Some(DataType::Int4),
        Func::SetSeed => Some(DataType::Float8),
        Func::SetConfig => Some([DataType::Text, DataType::Text, DataType::Bool][i.min(2)].clone()),
        Func::ToReg(_, true) => Some(DataType::Text),
        Func::NextVal | Func::CurrVal => Some(DataType::Text),
        Func::SetVal => Some([DataType::Text, DataType::Int8, DataType::Bool][i.min(2)].clone()),
        Func::CurrentSchemas => Some(DataType::Bool),
        Func::ConstraintDef
        | Func::IndexDef
        | Func::TableIsVisible
        | Func::Description
        | Func::UserById
        | Func::ObjDescription
        | Func::ColDescription
        | Func::ProcInfo(_)
            if i == 0 =>
        {
            Some(DataType::Int8)
        }
        Func::ConstraintDef => Some(DataType::Bool),
        Func::IndexDef => Some([DataType::Int8, DataType::Int4, DataType::Bool][i.min(2)].clone()),
        Func::SerialSequence => Some(DataType::Text),
        Func::FormatType => Some([DataType::Int8, DataType::Int4][i.min(1)].clone()),
        Func::ObjDescription | Func::Description => Some(DataType::Text),
        Func::DescribeObject => {
            Some([DataType::Int8, DataType::Int8, DataType::Int4][i.min(2)].clone())
        }
        // A relation as it comes (a name is looked up when called); a fork
        // name as text.
        Func::Size(SizeFunc::Relation) if i == 1 => Some(DataType::Text),
        Func::Size(SizeFunc::Bytes) => Some(DataType::Text),
        Func::ColDescription => Some(DataType::Int4),
        Func::GetExpr => Some([DataType::Text, DataType::Int8, DataType::Bool][i.min(2)].clone()),
        Func::PartKeyDef => Some(DataType::Int8),
        Func::Left | Func::Right | Func::LPad | Func::RPad | Func::SplitPart
            if i > 0
                && !(i == 2 && matches!(f, Func::LPad | Func::RPad))
                && !(i == 1 && f == Func::SplitPart) =>
        {
            Some(DataType::Int4)
        }
        Func::StrPos
        | Func::Left
        | Func::Right
        | Func::LPad
        | Func::RPad
        | Func::LTrim
        | Func::RTrim
        | Func::BTrimChars
        | Func::SplitPart
        | Func::Reverse
        | Func::InitCap
        | Func::StartsWith => Some(DataType::Text),
        Func::OctetLength if *result == DataType::Int4 => None,
        Func::Length | Func::OctetLength | Func::Lower | Func::Upper | Func::Trim => {
            Some(DataType::Text)
        }
        Func::Substr | Func::Repeat if i > 0 => Some(DataType::Int4),
        // concat() prints each argument with its own output function.
        Func::Concat => None,
        Func::Substr | Func::Repeat | Func::Replace => Some(DataType::Text),
        Func::Round | Func::Trunc if i == 1 => Some(DataType::Int4),
        Func::Round | Func::Floor | Func::Ceil | Func::Trunc | Func::Sign => Some(result.clone()),
        _ => None,
    }
}

fn common(args: &[DataType]) -> Result<DataType> {
    let mut ty = DataType::Unknown;
    for a in args {
        ty = match cast::common_type(&ty, a) {
            Some(t) => t,
            None => bail!(DatatypeMismatch, "types {ty} and {a} cannot be matched"),
        };
    }
    Ok(if ty == DataType::Unknown { DataType::Text } else { ty })
}

fn text(v: &Value) -> Result<&str> {
    match v {
        Value::Text(s) => Ok(s),
        other => bail!(DatatypeMismatch, "expected text argument, got {:?}", other.data_type()),
    }
}

fn int(v: &Value) -> Result<i64> {
    match v {
        Value::Int2(i) => Ok(*i as i64),
        Value::Int4(i) => Ok(*i as i64),
        Value::Int8(i) => Ok(*i),
        other => bail!(DatatypeMismatch, "expected integer argument, got {:?}", other.data_type()),
    }
}

fn float(v: &Value) -> Result<f64> {
    match cast::cast(v.clone(), &DataType::Float8)? {
        Value::Float8(f) => Ok(f),
        _ => bail!(DatatypeMismatch, "expected a number"),
    }
}

/// A size function's value (sizes.rs).
fn size(f: SizeFunc, args: &[Value], ctx: &EvalContext) -> Result<Value> {
    if f == SizeFunc::Bytes {
        return match &args[0] {
            Value::Text(s) => Ok(Value::Int8(crate::sizes::bytes(s)?)),
            _ => Ok(Value::Null),
        };
    }
    let Some(cat) = ctx.catalog.as_deref() else { return Ok(Value::Null) };
    if f == SizeFunc::Pretty {
        let n: i128 = match &args[0] {
            Value::Numeric(d) => {
                // Bytes keep their fraction; larger units drop it first.
                let text = d.to_string();
                let whole: i128 =
                    text.split('.').next().unwrap_or_default().parse().unwrap_or_default();
                if whole.abs() < 10 * 1024 {
                    return Ok(Value::Text(format!("{text} bytes")));
                }
                whole
            }
            other => int(other)? as i128,
        };
        return Ok(Value::Text(crate::sizes::pretty(n)));
    }
    let oid = match (f, &args[0]) {
        (SizeFunc::Database, Value::Text(name)) if name != "postgres" => {
            bail!(InvalidCatalogName, "database \"{name}\" does not exist")
        }
        (SizeFunc::Database, Value::Text(_)) => crate::catalog::DATABASE_OID,
        (_, Value::Text(name)) => match catalog_info::class_oid(cat, name) {
            Some(oid) => oid,
            None => bail!(UndefinedTable, "relation \"{name}\" does not exist"),
        },
        (_, other) => match other.as_oid() {
            Some(oid) => oid,
            None => bail!(InternalError, "size of {other:?}"),
        },
    };
    // Only the main fork has data; the others are empty, as a table's are
    // in PostgreSQL before VACUUM makes its maps.
    if let Some(Value::Text(fork)) = args.get(1) {
        match fork.as_str() {
            "main" => {}
            "fsm" | "vm" | "init" => return Ok(Value::Int8(0)),
            _ => {
                return Err(err!(InvalidParameterValue, "invalid fork name")
                    .with_hint("Valid fork names are \"main\", \"fsm\", \"vm\", and \"init\"."))
            }
        }
    }
    let Some(sizes) = &ctx.sizes else { return Ok(Value::Null) };
    let sizes = sizes.get()?;
    let bytes = match f {
        SizeFunc::Database if oid == crate::catalog::DATABASE_OID => Some(sizes.database),
        SizeFunc::Database => None,
        SizeFunc::Relation => sizes.relation(oid),
        SizeFunc::Indexes => sizes.indexes(cat, oid),
        SizeFunc::Total => sizes.total(cat, oid),
        SizeFunc::Pretty | SizeFunc::Bytes => unreachable!("returned above"),
    };
    Ok(bytes.map_or(Value::Null, |b| Value::Int8(b as i64)))
}

impl Func {
    /// Evaluates the function. Strict functions return NULL on a NULL argument.
    pub fn call(self, args: Vec<Value>, ctx: &EvalContext) -> Result<Value> {
        match self {
            Func::Array(f) => return arrays::call(f, args),
            Func::Date(f) => return datetime::call(f, args, ctx.txn_time, ctx.zone()),
            Func::Json(f) => return json::call(f, args, ctx.zone()),
            Func::Regex(f) => return regex::call(f, args),
            Func::Advisory(f) => return advisory::call(f, args, ctx),
            Func::Server(f) => return server::call(f, args, ctx),
            Func::Digest(f) => return digests::call(f, args),
            Func::Uuid(f) => return uuid_ossp::call(f, args),
            Func::Privilege(f) => return privileges::call(f, args, ctx),
            Func::Str(f) => return strings::call(f, args, ctx),
            Func::Net(f) => return network::call(f, args, ctx),
            Func::Range(f) => return ranges::call(f, args),
            Func::Math(f) => return math::call(f, args),
            Func::Crypto(f) => return pgcrypto::call(f, args),
            _ => {}
        }
        let strict = !matches!(
            self,
            Func::Coalesce
                | Func::Concat
                | Func::Greatest
                | Func::Least
                | Func::NullIf
                | Func::FormatType
                | Func::QuoteLiteral(true)
                | Func::Overlaps
        );
        if strict && args.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
        Ok(match self {
            Func::Now => Value::TimestampTz(ctx.txn_time),
            Func::StatementTimestamp => Value::TimestampTz(ctx.stmt_time),
            Func::ClockTimestamp => Value::TimestampTz(sqltypes::datetime::now_micros()),
            Func::CurrentDate => {
                Value::Date(ctx.zone().utc_to_local(ctx.txn_time).div_euclid(86_400_000_000) as i32)
            }
            Func::LocalTimestamp => Value::Timestamp(ctx.zone().utc_to_local(ctx.txn_time)),
            Func::Precision(clock) => {
                let p = int(&arg(0))?;
                let name = match clock {
                    Clock::Timestamp => "TIMESTAMP(%) WITH TIME ZONE",
                    Clock::LocalTimestamp => "TIMESTAMP(%)",
                    Clock::Time => "TIME(%) WITH TIME ZONE",
                    Clock::LocalTime => "TIME(%)",
                };
                if p < 0 {
                    let shown = name.replace('%', &p.to_string());
                    bail!(InvalidParameterValue, "{shown} precision must not be negative");
                }
                if p > 6 {
                    let shown = name.replace('%', &p.to_string());
                    let msg = format!("{shown} precision reduced to maximum allowed, 6");
                    ctx.warnings.lock().push(sqlstate::ErrorReport {
                        severity: sqlstate::Severity::Warning,
                        ..err!(InvalidParameterValue, "{msg}")
                    });
                }
                let unit = 10i64.pow(6 - p.clamp(0, 6) as u32);
                let round = |v: i64| (v + unit / 2).div_euclid(unit) * unit;
                let utc = round(ctx.txn_time);
                let local = ctx.zone().utc_to_local(utc);
                let day = sqltypes::datetime::USECS_PER_DAY;
                match clock {
                    Clock::Timestamp => Value::TimestampTz(utc),
                    Clock::LocalTimestamp => Value::Timestamp(local),
                    Clock::Time => Value::TimeTz(local.rem_euclid(day), ctx.zone().offset_at(utc)),
                    Clock::LocalTime => Value::Time(local.rem_euclid(day)),
                }
            }
            Func::CurrentTime(with_zone) => {
                let local = ctx.zone().utc_to_local(ctx.txn_time);
                let time = local.rem_euclid(sqltypes::datetime::USECS_PER_DAY);
                match with_zone {
                    true => Value::TimeTz(time, ctx.zone().offset_at(ctx.txn_time)),
                    false => Value::Time(time),
                }
            }
            Func::Timezone => {
                let zone = match arg(0) {
                    Value::Interval(iv) if iv.months == 0 && iv.days == 0 => {
                        sqltypes::Zone::fixed((iv.micros / 1_000_000) as i32)?
                    }
                    Value::Interval(_) => bail!(
                        InvalidParameterValue,
                        "interval time zone \"{}\" must not include months or days",
                        sqltypes::text::to_text(&arg(0))
                    ),
                    v => sqltypes::Zone::lookup_or_abbreviation(&sqltypes::text::to_text(&v))?,
                };
                match arg(1) {
                    Value::TimestampTz(t) => Value::Timestamp(zone.utc_to_local(t)),
                    Value::Timestamp(t) => Value::TimestampTz(zone.local_to_utc(t)),
                    _ => Value::Null,
                }
            }
            Func::Abs => {
                let v = arg(0);
                match ops::compare(&v, &Value::Int4(0))? {
                    Some(std::cmp::Ordering::Less) => ops::neg(&v)?,
                    _ => v,
                }
            }
            // char(n) arguments arrive with their padding already dropped (the
            // bpchar-to-text conversion), so every character counts here.
            Func::Length => Value::Int4(text(&arg(0))?.chars().count() as i32),
            Func::OctetLength => match arg(0) {
                Value::Bytea(b) => Value::Int4(b.len() as i32),
                other => Value::Int4(text(&other)?.len() as i32),
            },
            Func::Lower => Value::Text(simple_case(text(&arg(0))?, false)),
            Func::Upper => Value::Text(simple_case(text(&arg(0))?, true)),
            Func::Coalesce => args.into_iter().find(|v| !v.is_null()).unwrap_or(Value::Null),
            Func::NullIf => {
                let (a, b) = (arg(0), arg(1));
                if matches!(ops::compare(&a, &b)?, Some(std::cmp::Ordering::Equal)) {
                    Value::Null
                } else {
                    a
                }
            }
            Func::Greatest | Func::Least => {
                let want = if self == Func::Greatest {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Less
                };
                let mut best = Value::Null;
                for v in args.into_iter().filter(|v| !v.is_null()) {
                    if best.is_null() || ops::compare(&v, &best)? == Some(want) {
                        best = v;
                    }
                }
                best
            }
            Func::Substr => {
                let s: Vec<char> = text(&arg(0))?.chars().collect();
                let from = int(&arg(1))?;
                let end = match args.get(2) {
                    Some(l) => {
                        let l = int(l)?;
                        if l < 0 {
                            bail!(SubstringError, "negative substring length not allowed");
                        }
                        from.saturating_add(l)
                    }
                    None => i64::MAX,
                };
                let start = from.max(1) as usize - 1;
                let end = end.clamp(1, s.len() as i64 + 1) as usize - 1;
                Value::Text(if start < end {
                    s[start..end].iter().collect()
                } else {
                    String::new()
                })
            }
            Func::Trim => Value::Text(text(&arg(0))?.trim_matches(' ').to_string()),
            Func::BTrimChars | Func::LTrim | Func::RTrim => {
                let (a0, a1) = (arg(0), args.get(1).cloned().unwrap_or(Value::Text(" ".into())));
                let (s, set) = (text(&a0)?, text(&a1)?);
                let set: Vec<char> = set.chars().collect();
                let is = |c: char| set.contains(&c);
                Value::Text(match self {
                    Func::LTrim => s.trim_start_matches(is).to_string(),
                    Func::RTrim => s.trim_end_matches(is).to_string(),
                    _ => s.trim_matches(is).to_string(),
                })
            }
            Func::StrPos => {
                let (a0, a1) = (arg(0), arg(1));
                let (s, sub) = (text(&a0)?, text(&a1)?);
                Value::Int4(match s.find(sub) {
                    Some(b) => s[..b].chars().count() as i32 + 1,
                    None => 0,
                })
            }
            Func::Left | Func::Right => {
                let a0 = arg(0);
                let chars: Vec<char> = text(&a0)?.chars().collect();
                let n = int(&arg(1))?;
                let len = chars.len() as i64;
                let take = if n >= 0 { n.min(len) } else { (len + n).max(0) } as usize;
                Value::Text(if self == Func::Left {
                    chars[..take].iter().collect()
                } else {
                    chars[chars.len() - take..].iter().collect()
                })
            }
            Func::LPad | Func::RPad => {
                let a0 = arg(0);
                let s: Vec<char> = text(&a0)?.chars().collect();
                let n = int(&arg(1))?.clamp(0, 1 << 20) as usize;
                let fill_v = args.get(2).cloned().unwrap_or(Value::Text(" ".into()));
                let fill: Vec<char> = text(&fill_v)?.chars().collect();
                if s.len() >= n || fill.is_empty() {
                    Value::Text(s[..n.min(s.len())].iter().collect())
                } else {
                    let pad: String = fill.iter().cycle().take(n - s.len()).collect();
                    let body: String = s.iter().collect();
                    Value::Text(if self == Func::LPad { pad + &body } else { body + &pad })
                }
            }
            Func::SplitPart => {
                let (a0, a1) = (arg(0), arg(1));
                let (s, d) = (text(&a0)?, text(&a1)?);
                let n = int(&arg(2))?;
                if n == 0 {
                    bail!(InvalidParameterValue, "field position must not be zero");
                }
                let parts: Vec<&str> = if d.is_empty() { vec![s] } else { s.split(d).collect() };
                let idx = if n > 0 { n - 1 } else { parts.len() as i64 + n };
                Value::Text(
                    usize::try_from(idx)
                        .ok()
                        .and_then(|i| parts.get(i))
                        .map(|p| p.to_string())
                        .unwrap_or_default(),
                )
            }
            Func::Reverse => Value::Text(text(&arg(0))?.chars().rev().collect()),
            Func::InitCap => {
                let mut out = String::new();
                let mut start = true;
                for c in text(&arg(0))?.chars() {
                    if c.is_alphanumeric() {
                        if start {
                            out.extend(c.to_uppercase());
                        } else {
                            out.extend(c.to_lowercase());
                        }
                        start = false;
                    } else {
                        out.push(c);
                        start = true;
                    }
                }
                Value::Text(out)
            }
            Func::StartsWith => {
                let (a0, a1) = (arg(0), arg(1));
                Value::Bool(text(&a0)?.starts_with(text(&a1)?))
            }
            Func::Round | Func::Floor | Func::Ceil | Func::Trunc | Func::Sign => {
                round_like(self, arg(0), args.get(1))?
            }
            Func::Random => Value::Float8(match &ctx.random {
                Some(r) => r.next(),
                None => rand_f64(),
            }),
            Func::SetSeed => {
                if let Some(r) = &ctx.random {
                    r.seed(float(&arg(0))?)?;
                } else {
                    SessionRandom::check_seed(float(&arg(0))?)?;
                }
                Value::Text(String::new())
            }
            Func::Version => Value::Text(crate::settings::VERSION_STRING.to_string()),
            Func::CurrentDatabase => Value::Text("postgres".into()),
            Func::ConstraintDef | Func::IndexDef | Func::TableIsVisible | Func::UserById => {
                let (Some(cat), Some(oid)) = (&ctx.catalog, arg(0).as_oid()) else {
                    return Ok(Value::Null);
                };
                let text = match self {
                    Func::UserById => Some(catalog_info::user_by_id(cat, oid)),
                    Func::ConstraintDef => {
                        let pretty = matches!(args.get(1), Some(Value::Bool(true)));
                        catalog_info::constraint_def(cat, oid, pretty)
                    }
                    Func::IndexDef => {
                        let column = int(&arg(1)).unwrap_or(0).max(0) as usize;
                        let pretty = matches!(args.get(2), Some(Value::Bool(true)));
                        catalog_info::index_def(cat, oid, column, pretty)
                    }
                    _ => return Ok(catalog_info::table_is_visible(cat, oid)),
                };
                text.map(Value::Text).unwrap_or(Value::Null)
            }
            Func::SerialSequence => {
                let (Some(cat), Value::Text(t), Value::Text(c)) = (&ctx.catalog, arg(0), arg(1))
                else {
                    return Ok(Value::Null);
                };
                catalog_info::serial_sequence(cat, &t, &c).map(Value::Text).unwrap_or(Value::Null)
            }
            Func::FormatType => match arg(0).as_oid() {
                None => Value::Null,
                Some(oid) => {
                    let typmod = match arg(1) {
                        Value::Int4(m) => Some(m),
                        _ => None,
                    };
                    Value::Text(catalog_info::format_type(ctx.catalog.as_deref(), oid, typmod))
                }
            },
            // The one shared object with a comment: the database.
            Func::Description => match (arg(0).as_oid(), arg(1)) {
                (Some(crate::catalog::DATABASE_OID), Value::Text(c)) if c == "pg_database" => {
                    Value::Text(crate::system::DATABASE_COMMENT.into())
                }
                _ => Value::Null,
            },
            Func::AclDefault => {
                let (Some(cat), Value::Text(kind), Some(owner)) =
                    (&ctx.catalog, arg(0), arg(1).as_oid())
                else {
                    return Ok(Value::Null);
                };
                catalog_info::acl_default(cat, &kind, owner)?
            }
            Func::TriggerDef => match (arg(0).as_oid(), &ctx.catalog) {
                (Some(oid), Some(cat)) => {
                    let pretty = matches!(arg(1), Value::Bool(true));
                    catalog_info::trigger_def(cat, oid, pretty).map_or(Value::Null, Value::Text)
                }
                _ => Value::Null,
            },
            Func::ProcInfo(which) => match arg(0).as_oid() {
                Some(oid) => catalog_info::proc_info(ctx.catalog.as_deref(), which, oid),
                None => Value::Null,
            },
            // pg_attrdef.adbin (and pg_constraint.conbin, pg_index's
            // expressions) hold the expression's text.
            Func::PartKeyDef => match (arg(0).as_oid(), &ctx.catalog) {
                (Some(oid), Some(cat)) => cat
                    .table_by_oid(oid)
                    .and_then(|t| crate::partition::key_sql(&t))
                    .map_or(Value::Null, Value::Text),
                _ => Value::Null,
            },
            // relpartbound holds a partition bound's text as it is shown.
            Func::GetExpr if matches!(arg(0), Value::Text(b) if b.starts_with("FOR VALUES ") || b == "DEFAULT") => {
                arg(0)
            }
            Func::GetExpr => match (arg(0), &ctx.catalog) {
                (Value::Text(text), Some(cat)) => {
                    let pretty = matches!(arg(2), Value::Bool(true));
                    let table = arg(1).as_oid().and_then(|oid| cat.table_by_oid(oid));
                    let role = match &table {
                        Some(t) => crate::deparse::role_of(t, &text),
                        None => crate::deparse::Role::Plain,
                    };
                    let t = table.as_deref();
                    Value::Text(crate::deparse::shown_expr(cat, t, &text, role, pretty))
                }
                (other, _) => other,
            },
            Func::Size(f) => size(f, &args, ctx)?,
            Func::DescribeObject => {
                let (Some(cat), Some(class), Some(oid), Value::Int4(sub)) =
                    (&ctx.catalog, arg(0).as_oid(), arg(1).as_oid(), arg(2))
                else {
                    return Ok(Value::Null);
                };
                let text = catalog_info::describe_object(cat, class, oid, sub);
                text.map(Value::Text).unwrap_or(Value::Null)
            }
            Func::ObjDescription | Func::ColDescription => {
                let (Some(cat), Some(oid)) = (&ctx.catalog, arg(0).as_oid()) else {
                    return Ok(Value::Null);
                };
                let text = match (self, arg(1)) {
                    (Func::ObjDescription, Value::Text(c))
                        if c == "pg_namespace"
                            && oid == crate::catalog::PUBLIC_NAMESPACE_OID
                            && !cat.public_dropped =>
                    {
                        Some(crate::system::PUBLIC_SCHEMA_COMMENT.to_string())
                    }
                    (Func::ObjDescription, Value::Text(c)) if c == "pg_namespace" => {
                        cat.schemas.values().find(|s| s.oid == oid).and_then(|s| s.comment.clone())
                    }
                    (Func::ObjDescription, Value::Text(c)) if c == "pg_proc" => {
                        match crate::builtins::proc_by_oid(oid) {
                            Some(p) => p.description.clone(),
                            None => cat.function_by_oid(oid).and_then(|f| f.comment.clone()),
                        }
                    }
                    (Func::ObjDescription, Value::Text(c)) if c == "pg_extension" => {
                        crate::extensions::comment(cat, oid)
                    }
                    // plpgsql's language has its extension's comment.
                    (Func::ObjDescription, Value::Text(c)) if c == "pg_language" => {
                        let plpgsql = crate::builtins::LANGUAGES.iter().find(|l| l.1 == "plpgsql");
                        let ext = crate::extensions::PLPGSQL_OID;
                        plpgsql
                            .filter(|l| l.0 == oid)
                            .and_then(|_| crate::extensions::comment(cat, ext))
                    }
                    (Func::ObjDescription, Value::Text(c)) if c == "pg_type" => {
                        cat.user_type(oid).and_then(|d| d.comment.clone())
                    }
                    (Func::ObjDescription, Value::Text(c)) if c != "pg_class" => None,
                    (Func::ObjDescription, _) => catalog_info::table_comment(cat, oid),
                    (_, Value::Int4(n)) => catalog_info::column_comment(cat, oid, n),
                    _ => None,
                };
                text.map(Value::Text).unwrap_or(Value::Null)
            }
            Func::CurrentUser(session) => {
                let user = if session { &ctx.session_user } else { &ctx.user };
                Value::Text(if user.is_empty() { "postgres".into() } else { user.to_string() })
            }
            Func::CurrentSchema => {
                let cat = ctx.catalog.as_deref();
                let first = cat.and_then(|c| c.namespace_name(*c.path.explicit.first()?));
                first.map(|n| Value::Text(n.to_string())).unwrap_or(Value::Null)
            }
            Func::BackendPid => Value::Int4(ctx.pid),
            Func::CurrentSetting => {
                let a0 = arg(0);
                let name = text(&a0)?.to_lowercase();
                match ctx.settings.get(&name) {
                    Some(v) => Value::Text(v.clone()),
                    // current_setting(name, missing_ok)
                    None if matches!(arg(1), Value::Bool(true)) => Value::Null,
                    None => {
                        bail!(UndefinedObject, "unrecognized configuration parameter \"{name}\"")
                    }
                }
            }
            Func::CurrentSchemas => {
                let implicit = matches!(arg(0), Value::Bool(true));
                let Some(cat) = ctx.catalog.as_deref() else { return Ok(Value::Null) };
                let oids = if implicit { &cat.path.relations } else { &cat.path.explicit };
                let names = oids.iter().filter_map(|&o| cat.namespace_name(o));
                let items = names.map(|n| Value::Text(n.to_string())).collect();
                sqltypes::array::ArrayValue::new(DataType::Text, items).into_value()
            }
            Func::Array(_) => unreachable!("array functions return above"),
            Func::TypeIsVisible => match (arg(0).as_oid(), ctx.catalog.as_deref()) {
                (Some(oid), Some(cat)) => match cat.user_type_of(oid) {
                    Some(d) => Value::Bool(cat.type_visible(d.namespace, &d.name)),
                    None => Value::Bool(DataType::from_oid(oid).is_some()),
                },
                _ => Value::Null,
            },
            Func::InRecovery => Value::Bool(false),
            Func::TxId => Value::Int8(ctx.txid),
            Func::StartTime => Value::TimestampTz(ctx.started),
            Func::ClientEncoding => Value::Text("UTF8".into()),
            Func::AlwaysVisible => Value::Bool(true),
            Func::TablespaceLocation => Value::Text(String::new()),
            Func::FunctionDef => {
                let (Some(cat), Some(oid)) = (&ctx.catalog, arg(0).as_oid()) else {
                    return Ok(Value::Null);
                };
                catalog_info::function_def(cat, oid).map_or(Value::Null, Value::Text)
            }
            Func::TimeOfDay => {
                let now = sqltypes::datetime::now_micros();
                Value::Text(sqltypes::datetime::time_of_day(now, ctx.zone()))
            }
            Func::Date(_)
            | Func::Json(_)
            | Func::Regex(_)
            | Func::Advisory(_)
            | Func::Server(_)
            | Func::Digest(_)
            | Func::Uuid(_)
            | Func::Privilege(_)
            | Func::Str(_)
            | Func::Net(_)
            | Func::Range(_)
            | Func::Math(_)
            | Func::Crypto(_) => {
                unreachable!("returned above")
            }
            Func::GenRandomUuid => Value::Uuid(sqltypes::uuid::v4(rand::random())),
            Func::Chr => {
                let code = int(&arg(0))?;
                match u32::try_from(code).ok().and_then(char::from_u32) {
                    Some('\0') => bail!(ProgramLimitExceeded, "null character not permitted"),
                    Some(c) => Value::Text(c.to_string()),
                    None => bail!(
                        ProgramLimitExceeded,
                        "requested character too large for encoding: {code}"
                    ),
                }
            }
            Func::SetConfig => {
                let (name, value) = (arg(0), arg(1));
                let (name, value) = (text(&name)?.to_lowercase(), text(&value)?.to_string());
                if !ctx.settings.contains_key(&name) && !name.contains('.') {
                    bail!(UndefinedObject, "unrecognized configuration parameter \"{name}\"");
                }
                let local = matches!(arg(2), Value::Bool(true));
                // A time is checked now and returned as SHOW prints it.
                let value = match crate::settings::duration::slot(&name).is_some() {
                    true => crate::settings::duration::canonical(&name, &value)?,
                    false => value,
                };
                ctx.set_config.lock().push((name, value.clone(), local));
                Value::Text(value)
            }
            // Strata's only encoding is UTF8 (6).
            Func::EncodingName => Value::Text(if int(&arg(0))? == 6 { "UTF8" } else { "" }.into()),
            Func::Ascii => {
                Value::Int4(text(&arg(0))?.chars().next().map(|c| c as i32).unwrap_or(0))
            }
            Func::QuoteIdent => Value::Text(catalog_info::quote_ident(text(&arg(0))?)),
            Func::ViewDef => {
                let Some(cat) = &ctx.catalog else { return Ok(Value::Null) };
                let oid = match arg(0) {
                    Value::Text(name) => catalog_info::class_oid(cat, &name),
                    v => v.as_oid(),
                };
                let def = oid.and_then(|o| catalog_info::view_def(cat, o));
                def.map(Value::Text).unwrap_or(Value::Null)
            }
            Func::QuoteLiteral(_) => match arg(0) {
                Value::Null => Value::Text("NULL".into()),
                v => Value::Text(quote_literal(text(&v)?)),
            },
            Func::ToReg(kind, lenient) => {
                let Some(cat) = &ctx.catalog else {
                    bail!(InternalError, "no catalog to look names up in");
                };
                catalog_info::to_reg(cat, kind, lenient, arg(0))?
            }
            Func::BpcharTrim => match arg(0) {
                Value::Text(s) => Value::Text(s.trim_end_matches(' ').to_string()),
                other => other,
            },
            // Each value as its type's output function writes it (`t`
            // for true), as PostgreSQL's concat does.
            Func::Spread => arg(0),
            Func::Overlaps => overlaps(&args)?,
            Func::TimePrecision => match arg(1) {
                Value::Int4(p) => sqltypes::datetime::round_precision(arg(0), p as u8),
                _ => arg(0),
            },
            Func::Concat => {
                let mut out = String::new();
                for v in args.iter().filter(|v| !v.is_null()) {
                    out.push_str(&sqltypes::text::to_text_in(v, ctx.zone()));
                }
                Value::Text(out)
            }
            Func::Repeat => {
                let n = int(&arg(1))?.max(0) as usize;
                let a0 = arg(0);
                let s = text(&a0)?;
                if s.len().saturating_mul(n) > (1 << 30) {
                    bail!(ProgramLimitExceeded, "requested length too large");
                }
                Value::Text(s.repeat(n))
            }
            Func::Replace => Value::Text(text(&arg(0))?.replace(text(&arg(1))?, text(&arg(2))?)),
            Func::Mod => ops::rem(&arg(0), &arg(1))?,
            Func::NextVal => Value::Int8(ctx.seqs.nextval(text(&arg(0))?)?),
            Func::CurrVal => Value::Int8(ctx.seqs.currval(text(&arg(0))?)?),
            Func::LastVal => Value::Int8(ctx.seqs.lastval()?),
            Func::SetVal => {
                let called = match args.get(2) {
                    Some(_) => matches!(arg(2), Value::Bool(true)),
                    None => true,
                };
                let v = match arg(1) {
                    Value::Int8(v) => v,
                    _ => bail!(DatatypeMismatch, "setval needs a bigint value"),
                };
                Value::Int8(ctx.seqs.setval(text(&arg(0))?, v, called)?)
            }
        })
    }
}

/// SQL's OVERLAPS on periods (s1, e1) and (s2, e2): each period is taken
/// from its lesser end; a NULL end leaves the answer unknown only where
/// the standard's rules need it (as PostgreSQL's overlaps_timestamp).
fn overlaps(args: &[Value]) -> Result<Value> {
    let [s1, e1, s2, e2] = args else {
        bail!(InternalError, "OVERLAPS takes two periods");
    };
    let gt = |a: &Value, b: &Value| -> Result<bool> {
        Ok(ops::compare(a, b)? == Some(std::cmp::Ordering::Greater))
    };
    // A period's start (never NULL) and end (None when NULL).
    let period = |s: &Value, e: &Value| -> Result<Option<(Value, Option<Value>)>> {
        Ok(match (s.is_null(), e.is_null()) {
            (true, true) => None,
            (true, false) => Some((e.clone(), None)),
            (false, true) => Some((s.clone(), None)),
            (false, false) if gt(s, e)? => Some((e.clone(), Some(s.clone()))),
            (false, false) => Some((s.clone(), Some(e.clone()))),
        })
    };
    let (Some((s1, e1)), Some((s2, e2))) = (period(s1, e1)?, period(s2, e2)?) else {
        return Ok(Value::Null);
    };
    // The later-starting period overlaps when it starts before the other
    // ends; equal starts overlap when both ends are known.
    let later_starts_inside = |s: &Value, e_other: &Option<Value>, e_own: &Option<Value>| {
        let Some(end) = e_other else { return Ok(Value::Null) };
        if gt(end, s)? {
            return Ok(Value::Bool(true));
        }
        Ok(if e_own.is_none() { Value::Null } else { Value::Bool(false) })
    };
    if gt(&s1, &s2)? {
        later_starts_inside(&s1, &e2, &e1)
    } else if gt(&s2, &s1)? {
        later_starts_inside(&s2, &e1, &e2)
    } else if e1.is_none() || e2.is_none() {
        Ok(Value::Null)
    } else {
        Ok(Value::Bool(true))
    }
}

fn round_like(f: Func, v: Value, scale: Option<&Value>) -> Result<Value> {
    if let Value::Float8(x) = v {
        return Ok(Value::Float8(match f {
            Func::Round => x.round_ties_even(),
            Func::Floor => x.floor(),
            Func::Trunc => x.trunc(),
            Func::Sign if x == 0.0 || x.is_nan() => x.abs(),
            Func::Sign => x.signum(),
            _ => x.ceil(),
        }));
    }
    let n = match cast::cast(v, &DataType::Numeric(None))? {
        Value::Numeric(n) => n,
        _ => bail!(DatatypeMismatch, "expected a number"),
    };
    let scale = match scale {
        Some(s) => int(s)?,
        None => 0,
    };
    Ok(Value::Numeric(match f {
        Func::Round => n.round(scale),
        Func::Floor => n.floor(),
        Func::Trunc => n.trunc(scale),
        Func::Sign if n.is_nan() => n,
        Func::Sign if n.is_zero() => Numeric::from_i64(0),
        // to_f64 keeps the sign even where the magnitude underflows.
        Func::Sign => Numeric::from_i64(if n.to_f64().is_sign_negative() { -1 } else { 1 }),
        _ => n.ceil(),
    }))
}

/// A session's random() sequence, which setseed() restarts: xorshift64*
/// (random() makes no cryptographic promise in PostgreSQL either).
#[derive(Debug)]
pub struct SessionRandom(parking_lot::Mutex<u64>);

impl Default for SessionRandom {
    /// A sequence seeded from the clock.
    fn default() -> Self {
        use std::time::{SystemTime, UNIX_EPOCH};
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
        SessionRandom(parking_lot::Mutex::new(now | 1))
    }
}

impl SessionRandom {
    /// The next value in [0, 1).
    pub fn next(&self) -> f64 {
        let mut state = self.0.lock();
        let mut x = *state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        *state = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// 22023 unless `seed` is in [-1, 1].
    pub fn check_seed(seed: f64) -> Result<()> {
        if !(-1.0..=1.0).contains(&seed) {
            bail!(InvalidParameterValue, "setseed parameter {seed} is out of allowed range [-1,1]");
        }
        Ok(())
    }

    /// setseed(seed): restarts the sequence from a seed in [-1, 1], so the
    /// same seed gives the same values; 22023 outside that range.
    pub fn seed(&self, seed: f64) -> Result<()> {
        Self::check_seed(seed)?;
        // splitmix64 of the seed's bits: a nonzero state for every seed.
        let mut z = seed.to_bits().wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        *self.0.lock() = (z ^ (z >> 31)) | 1;
        Ok(())
    }
}

/// random() outside a session: a sequence per thread.
fn rand_f64() -> f64 {
    thread_local! {
        static STATE: SessionRandom = SessionRandom::default();
    }
    STATE.with(SessionRandom::next)
}

/// Per-character case mapping as libc's towupper/towlower do (what
/// PostgreSQL uses): characters whose full mapping is not a single
/// character (such as 'ß') stay unchanged.
fn simple_case(s: &str, upper: bool) -> String {
    s.chars()
        .map(|c| {
            let mut m: Vec<char> =
                if upper { c.to_uppercase().collect() } else { c.to_lowercase().collect() };
            if m.len() == 1 {
                m.pop().unwrap_or(c)
            } else {
                c
            }
        })
        .collect()
}

/// quote_literal: the text in single quotes, quotes doubled; with a
/// backslash, doubled too and the literal written E'...'.
pub(crate) fn quote_literal(s: &str) -> String {
    let body = s.replace('\'', "''");
    match s.contains('\\') {
        true => format!("E'{}'", body.replace('\\', "\\\\")),
        false => format!("'{body}'"),
    }
}
