//! System catalog views (pg_catalog, information_schema) computed from the
//! Strata catalog at query time.
//!
//! These are not stored tables: each scan builds its rows from the current
//! [`Catalog`] snapshot, so they are always consistent with it after DDL.
//! Only the tables and columns that clients read today are present; OIDs are
//! reported as bigint until the `oid` type exists.

use std::borrow::Cow;

use sqltypes::{DataType, Value};

use crate::catalog::{
    Catalog, ColumnDef, ForeignKeyDef, TableDef, UserTypeKind, PUBLIC_NAMESPACE_OID,
};
use crate::ddl::access_methods;

// pg_locks and pg_stat_activity: the sessions' locks and what they do.
pub mod activity;
// pg_proc, pg_language and pg_settings.
pub mod builtin_rows;
// pg_depend.
pub mod depend;
// pg_indexes and pg_views: views over the other catalogs, in SQL.
pub mod views;

/// A system catalog view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemTable {
    /// pg_catalog.pg_namespace
    PgNamespace,
    /// pg_catalog.pg_class
    PgClass,
    /// pg_catalog.pg_attribute
    PgAttribute,
    /// pg_catalog.pg_type
    PgType,
    /// pg_catalog.pg_database
    PgDatabase,
    /// pg_catalog.pg_roles
    PgRoles,
    /// pg_catalog.pg_user (the roles that can log in)
    PgUser,
    /// pg_catalog.pg_partitioned_table
    PgPartitionedTable,
    /// pg_catalog.pg_inherits (partitions; Strata has no inheritance)
    PgInherits,
    /// pg_catalog.pg_index
    PgIndex,
    /// pg_catalog.pg_tables
    PgTables,
    /// information_schema.tables
    InfoTables,
    /// information_schema.columns
    InfoColumns,
    /// information_schema.schemata
    InfoSchemata,
    /// information_schema.views
    InfoViews,
    /// information_schema.domains
    InfoDomains,
    /// information_schema.domain_constraints
    InfoDomainConstraints,
    /// information_schema.triggers (one row per trigger and event)
    InfoTriggers,
    /// information_schema.triggered_update_columns (UPDATE OF columns)
    InfoTriggeredUpdateColumns,
    /// information_schema.table_privileges, or role_table_grants (true):
    /// the ACLs of tables and views, one row per privilege
    InfoTablePrivileges(bool),
    /// pg_catalog.pg_am (heap and btree)
    PgAm,
    /// pg_catalog.pg_cursors (the session's open SQL cursors)
    PgCursors,
    /// pg_catalog.pg_description (COMMENT ON tables and columns)
    PgDescription,
    /// pg_catalog.pg_attrdef (column defaults; adbin holds the text)
    PgAttrdef,
    /// pg_catalog.pg_constraint (primary key, unique and foreign key
    /// constraints; without the array columns until arrays exist)
    PgConstraint,
    /// information_schema.table_constraints
    InfoTableConstraints,
    /// information_schema.key_column_usage
    InfoKeyColumnUsage,
    /// information_schema.referential_constraints
    InfoReferentialConstraints,
    /// information_schema.constraint_column_usage
    InfoConstraintColumnUsage,
    /// pg_catalog.pg_collation (default, C and POSIX)
    PgCollation,
    /// pg_catalog.pg_trigger (foreign keys are not triggers here)
    PgTrigger,
    /// pg_catalog.pg_sequence
    PgSequence,
    /// pg_catalog.pg_sequences (last_value filled in by
    /// [`fill_sequence_positions`])
    PgSequences,
    /// pg_catalog.pg_opclass (the default btree operator classes)
    PgOpclass,
    /// pg_catalog.pg_proc (the built-in functions)
    PgProc,
    /// pg_catalog.pg_language (internal, c and sql)
    PgLanguage,
    /// pg_catalog.pg_settings (the session's settings)
    PgSettings,
    /// pg_catalog.pg_depend (owned sequences, defaults on sequences, views
    /// on relations)
    PgDepend,
    /// pg_catalog.pg_tablespace (pg_default and pg_global)
    PgTablespace,
    /// pg_catalog.pg_enum (the labels of enum types)
    PgEnum,
    /// pg_catalog.pg_locks (advisory locks held and awaited)
    PgLocks,
    /// pg_catalog.pg_stat_activity (the tenant's sessions)
    PgStatActivity,
    /// pg_catalog.pg_extension (plpgsql and the installed extensions)
    PgExtension,
    /// pg_catalog.pg_shdescription (the database's comment)
    PgShDescription,
    /// pg_catalog.pg_available_extensions (the extensions Strata ships)
    PgAvailableExtensions,
    /// A catalog of a feature Strata does not have, so always empty
    /// (pg_policy, pg_publication, ...), or one whose few rows are built
    /// in (pg_range): an index into `EMPTY_CATALOGS`.
    Empty(usize),
}

/// The always-empty catalogs that psql and ORMs query, with their columns.
const EMPTY_CATALOGS: &[(&str, &[(&str, u32)])] = &[
    (
        "pg_policy",
        &[
            ("oid", 26),
            ("polname", 25),
            ("polrelid", 26),
            ("polcmd", 18),
            ("polpermissive", 16),
            ("polroles", 1028),
            ("polqual", 25),
            ("polwithcheck", 25),
        ],
    ),
    (
        "pg_statistic_ext",
        &[
            ("oid", 26),
            ("stxrelid", 26),
            ("stxname", 25),
            ("stxnamespace", 26),
            ("stxowner", 26),
            ("stxstattarget", 23),
            ("stxkeys", 22),
            ("stxkind", 1002),
            ("stxexprs", 25),
        ],
    ),
    (
        "pg_publication",
        &[
            ("oid", 26),
            ("pubname", 25),
            ("pubowner", 26),
            ("puballtables", 16),
            ("pubinsert", 16),
            ("pubupdate", 16),
            ("pubdelete", 16),
            ("pubtruncate", 16),
            ("pubviaroot", 16),
        ],
    ),
    (
        "pg_publication_rel",
        &[("oid", 26), ("prpubid", 26), ("prrelid", 26), ("prqual", 25), ("prattrs", 22)],
    ),
    ("pg_publication_namespace", &[("oid", 26), ("pnpubid", 26), ("pnnspid", 26)]),
    (
        "pg_rewrite",
        &[
            ("oid", 26),
            ("rulename", 25),
            ("ev_class", 26),
            ("ev_type", 18),
            ("ev_enabled", 18),
            ("is_instead", 16),
            ("ev_qual", 25),
            ("ev_action", 25),
        ],
    ),
    ("pg_foreign_table", &[("ftrelid", 26), ("ftserver", 26), ("ftoptions", 1009)]),
    ("pg_auth_members", &[("roleid", 26), ("member", 26), ("grantor", 26), ("admin_option", 16)]),
    (
        "pg_aggregate",
        &[
            ("aggfnoid", 24),
            ("aggkind", 18),
            ("aggnumdirectargs", 21),
            ("aggtransfn", 24),
            ("aggfinalfn", 24),
            ("aggcombinefn", 24),
            ("aggserialfn", 24),
            ("aggdeserialfn", 24),
            ("aggmtransfn", 24),
            ("aggminvtransfn", 24),
            ("aggmfinalfn", 24),
            ("aggfinalextra", 16),
            ("aggmfinalextra", 16),
            ("aggfinalmodify", 18),
            ("aggmfinalmodify", 18),
            ("aggsortop", 26),
            ("aggtranstype", 26),
            ("aggtransspace", 23),
            ("aggmtranstype", 26),
            ("aggmtransspace", 23),
            ("agginitval", 25),
            ("aggminitval", 25),
        ],
    ),
    (
        "pg_amop",
        &[
            ("oid", 26),
            ("amopfamily", 26),
            ("amoplefttype", 26),
            ("amoprighttype", 26),
            ("amopstrategy", 21),
            ("amoppurpose", 18),
            ("amopopr", 26),
            ("amopmethod", 26),
            ("amopsortfamily", 26),
        ],
    ),
    (
        "pg_amproc",
        &[
            ("oid", 26),
            ("amprocfamily", 26),
            ("amproclefttype", 26),
            ("amprocrighttype", 26),
            ("amprocnum", 21),
            ("amproc", 24),
        ],
    ),
    (
        "pg_cast",
        &[
            ("oid", 26),
            ("castsource", 26),
            ("casttarget", 26),
            ("castfunc", 26),
            ("castcontext", 18),
            ("castmethod", 18),
        ],
    ),
    (
        "pg_conversion",
        &[
            ("oid", 26),
            ("conname", 25),
            ("connamespace", 26),
            ("conowner", 26),
            ("conforencoding", 23),
            ("contoencoding", 23),
            ("conproc", 24),
            ("condefault", 16),
        ],
    ),
    (
        "pg_default_acl",
        &[
            ("oid", 26),
            ("defaclrole", 26),
            ("defaclnamespace", 26),
            ("defaclobjtype", 18),
            ("defaclacl", 1009),
        ],
    ),
    (
        "pg_event_trigger",
        &[
            ("oid", 26),
            ("evtname", 25),
            ("evtevent", 25),
            ("evtowner", 26),
            ("evtfoid", 26),
            ("evtenabled", 18),
            ("evttags", 1009),
        ],
    ),
    (
        "pg_foreign_data_wrapper",
        &[
            ("oid", 26),
            ("fdwname", 25),
            ("fdwowner", 26),
            ("fdwhandler", 26),
            ("fdwvalidator", 26),
            ("fdwacl", 1009),
            ("fdwoptions", 1009),
        ],
    ),
    (
        "pg_foreign_server",
        &[
            ("oid", 26),
            ("srvname", 25),
            ("srvowner", 26),
            ("srvfdw", 26),
            ("srvtype", 25),
            ("srvversion", 25),
            ("srvacl", 1009),
            ("srvoptions", 1009),
        ],
    ),
    (
        "pg_init_privs",
        &[
            ("objoid", 26),
            ("classoid", 26),
            ("objsubid", 23),
            ("privtype", 18),
            ("initprivs", 1009),
        ],
    ),
    ("pg_largeobject_metadata", &[("oid", 26), ("lomowner", 26), ("lomacl", 1009)]),
    (
        "pg_operator",
        &[
            ("oid", 26),
            ("oprname", 25),
            ("oprnamespace", 26),
            ("oprowner", 26),
            ("oprkind", 18),
            ("oprcanmerge", 16),
            ("oprcanhash", 16),
            ("oprleft", 26),
            ("oprright", 26),
            ("oprresult", 26),
            ("oprcom", 26),
            ("oprnegate", 26),
            ("oprcode", 24),
            ("oprrest", 24),
            ("oprjoin", 24),
        ],
    ),
    (
        "pg_opfamily",
        &[("oid", 26), ("opfmethod", 26), ("opfname", 25), ("opfnamespace", 26), ("opfowner", 26)],
    ),
    (
        "pg_seclabels",
        &[
            ("objoid", 26),
            ("classoid", 26),
            ("objsubid", 23),
            ("objtype", 25),
            ("objnamespace", 26),
            ("objname", 25),
            ("provider", 25),
            ("label", 25),
        ],
    ),
    ("pg_db_role_setting", &[("setdatabase", 26), ("setrole", 26), ("setconfig", 1009)]),
    (
        "pg_subscription",
        &[
            ("oid", 26),
            ("subdbid", 26),
            ("subskiplsn", 25),
            ("subname", 25),
            ("subowner", 26),
            ("subenabled", 16),
            ("subbinary", 16),
            ("substream", 16),
            ("subtwophasestate", 18),
            ("subdisableonerr", 16),
            ("subconninfo", 25),
            ("subslotname", 25),
            ("subsynccommit", 25),
            ("subpublications", 1009),
        ],
    ),
    (
        "pg_transform",
        &[("oid", 26), ("trftype", 26), ("trflang", 26), ("trffromsql", 24), ("trftosql", 24)],
    ),
    (
        "pg_ts_config",
        &[("oid", 26), ("cfgname", 25), ("cfgnamespace", 26), ("cfgowner", 26), ("cfgparser", 26)],
    ),
    (
        "pg_ts_config_map",
        &[("mapcfg", 26), ("maptokentype", 23), ("mapseqno", 23), ("mapdict", 26)],
    ),
    (
        "pg_ts_dict",
        &[
            ("oid", 26),
            ("dictname", 25),
            ("dictnamespace", 26),
            ("dictowner", 26),
            ("dicttemplate", 26),
            ("dictinitoption", 25),
        ],
    ),
    (
        "pg_ts_parser",
        &[
            ("oid", 26),
            ("prsname", 25),
            ("prsnamespace", 26),
            ("prsstart", 24),
            ("prstoken", 24),
            ("prsend", 24),
            ("prsheadline", 24),
            ("prslextype", 24),
        ],
    ),
    (
        "pg_ts_template",
        &[
            ("oid", 26),
            ("tmplname", 25),
            ("tmplnamespace", 26),
            ("tmplinit", 24),
            ("tmpllexize", 24),
        ],
    ),
    ("pg_user_mapping", &[("oid", 26), ("umuser", 26), ("umserver", 26), ("umoptions", 1009)]),
    (
        "pg_range",
        &[
            ("rngtypid", 26),
            ("rngsubtype", 26),
            ("rngmultitypid", 26),
            ("rngcollation", 26),
            ("rngsubopc", 26),
            ("rngcanonical", 24),
            ("rngsubdiff", 24),
        ],
    ),
];

/// pg_catalog's tables and views with PostgreSQL 15's OIDs (they are not
/// rows of Strata's pg_class): what a regclass may name, and each catalog
/// table's tableoid. The views come last.
pub const CATALOG_RELATIONS: &[(&str, u32)] = &[
    ("pg_default_acl", 826),
    ("pg_tablespace", 1213),
    ("pg_type", 1247),
    ("pg_attribute", 1249),
    ("pg_proc", 1255),
    ("pg_class", 1259),
    ("pg_authid", 1260),
    ("pg_auth_members", 1261),
    ("pg_database", 1262),
    ("pg_foreign_server", 1417),
    ("pg_user_mapping", 1418),
    ("pg_sequence", 2224),
    ("pg_foreign_data_wrapper", 2328),
    ("pg_shdescription", 2396),
    ("pg_db_role_setting", 2964),
    ("pg_aggregate", 2600),
    ("pg_am", 2601),
    ("pg_amop", 2602),
    ("pg_amproc", 2603),
    ("pg_attrdef", 2604),
    ("pg_cast", 2605),
    ("pg_constraint", 2606),
    ("pg_conversion", 2607),
    ("pg_depend", 2608),
    ("pg_description", 2609),
    ("pg_index", 2610),
    ("pg_inherits", 2611),
    ("pg_language", 2612),
    ("pg_namespace", 2615),
    ("pg_opclass", 2616),
    ("pg_operator", 2617),
    ("pg_rewrite", 2618),
    ("pg_trigger", 2620),
    ("pg_opfamily", 2753),
    ("pg_largeobject_metadata", 2995),
    ("pg_extension", 3079),
    ("pg_foreign_table", 3118),
    ("pg_policy", 3256),
    ("pg_partitioned_table", 3350),
    ("pg_statistic_ext", 3381),
    ("pg_init_privs", 3394),
    ("pg_collation", 3456),
    ("pg_event_trigger", 3466),
    ("pg_enum", 3501),
    ("pg_range", 3541),
    ("pg_transform", 3576),
    ("pg_ts_dict", 3600),
    ("pg_ts_parser", 3601),
    ("pg_ts_config", 3602),
    ("pg_ts_config_map", 3603),
    ("pg_ts_template", 3764),
    ("pg_subscription", 6100),
    ("pg_publication", 6104),
    ("pg_publication_rel", 6106),
    ("pg_publication_namespace", 6237),
    ("pg_roles", 12000),
    ("pg_user", 12014),
    ("pg_views", 12028),
    ("pg_tables", 12033),
    ("pg_indexes", 12043),
    ("pg_sequences", 12048),
    ("pg_locks", 12073),
    ("pg_cursors", 12077),
    ("pg_seclabels", 12099),
    ("pg_settings", 12104),
    ("pg_available_extensions", 12081),
    ("pg_stat_all_tables", 12142),
    ("pg_stat_user_tables", 12161),
    ("pg_statio_all_tables", 12170),
    ("pg_statio_user_tables", 12179),
    ("pg_stat_all_indexes", 12183),
    ("pg_stat_user_indexes", 12192),
    ("pg_statio_all_indexes", 12196),
    ("pg_statio_user_indexes", 12205),
    ("pg_stat_activity", 12222),
    ("pg_stat_database", 12266),
];

/// OIDs from here on are views, which have no tableoid.
const FIRST_VIEW_OID: u32 = 12000;

const PG_CATALOG_OID: i64 = 11;

/// pg_extension's own OID (pg_description.classoid of an extension's
/// comment).
const PG_EXTENSION_OID: i64 = 3079;
/// pg_database's own OID (pg_shdescription.classoid of its comment).
const PG_DATABASE_OID: i64 = 1262;
/// The comment initdb gives the `postgres` database.
pub const DATABASE_COMMENT: &str = "default administrative connection database";
/// pg_language's own OID.
const PG_LANGUAGE_OID: i64 = 2612;
/// pg_type's own OID (pg_description.classoid of a type's comment).
const PG_TYPE_OID: i64 = 1247;
const PG_PROC_OID: i64 = 1255;
/// The comment initdb gives the public schema.
pub const PUBLIC_SCHEMA_COMMENT: &str = "standard public schema";
/// pg_class's own OID (pg_description.classoid of tables and columns).
pub const PG_CLASS_OID: i64 = 1259;
/// pg_database_owner, the role that owns the `public` schema (PostgreSQL 15).
pub const DATABASE_OWNER_OID: i64 = 6171;

/// PostgreSQL 15's predefined roles (none can log in), listed in pg_roles
/// after the catalog's roles: whoever reads an owner OID such as public's
/// finds its role.
pub const PREDEFINED_ROLES: &[(&str, u32)] = &[
    ("pg_database_owner", DATABASE_OWNER_OID as u32),
    ("pg_read_all_data", 6181),
    ("pg_write_all_data", 6182),
    ("pg_monitor", 3373),
    ("pg_read_all_settings", 3374),
    ("pg_read_all_stats", 3375),
    ("pg_stat_scan_tables", 3377),
    ("pg_read_server_files", 4569),
    ("pg_write_server_files", 4570),
    ("pg_execute_server_program", 4571),
    ("pg_signal_backend", 4200),
    ("pg_checkpoint", 4544),
];
const INFO_SCHEMA_OID: i64 = 13000;

impl SystemTable {
    /// Finds a system view by (optional schema and) name.
    pub fn lookup(schema: Option<&str>, name: &str) -> Option<SystemTable> {
        use SystemTable::*;
        let info = schema == Some("information_schema");
        Some(match (info, name) {
            (false, "pg_namespace") => PgNamespace,
            (false, "pg_class") => PgClass,
            (false, "pg_attribute") => PgAttribute,
            (false, "pg_type") => PgType,
            (false, "pg_database") => PgDatabase,
            (false, "pg_roles") => PgRoles,
            (false, "pg_user") => PgUser,
            (false, "pg_partitioned_table") => PgPartitionedTable,
            (false, "pg_inherits") => PgInherits,
            (false, "pg_index") => PgIndex,
            (false, "pg_tables") => PgTables,
            (true, "tables") => InfoTables,
            (true, "schemata") => InfoSchemata,
            (true, "views") => InfoViews,
            (true, "domains") => InfoDomains,
            (true, "domain_constraints") => InfoDomainConstraints,
            (true, "triggers") => InfoTriggers,
            (true, "triggered_update_columns") => InfoTriggeredUpdateColumns,
            (true, "table_privileges") => InfoTablePrivileges(false),
            (true, "role_table_grants") => InfoTablePrivileges(true),
            (true, "columns") => InfoColumns,
            (false, "pg_constraint") => PgConstraint,
            (false, "pg_am") => PgAm,
            (false, "pg_cursors") => PgCursors,
            (false, "pg_description") => PgDescription,
            (false, "pg_attrdef") => PgAttrdef,
            (true, "table_constraints") => InfoTableConstraints,
            (true, "key_column_usage") => InfoKeyColumnUsage,
            (true, "referential_constraints") => InfoReferentialConstraints,
            (true, "constraint_column_usage") => InfoConstraintColumnUsage,
            (false, "pg_collation") => PgCollation,
            (false, "pg_trigger") => PgTrigger,
            (false, "pg_sequence") => PgSequence,
            (false, "pg_sequences") => PgSequences,
            (false, "pg_opclass") => PgOpclass,
            (false, "pg_proc") => PgProc,
            (false, "pg_language") => PgLanguage,
            (false, "pg_settings") => PgSettings,
            (false, "pg_depend") => PgDepend,
            (false, "pg_tablespace") => PgTablespace,
            (false, "pg_enum") => PgEnum,
            (false, "pg_locks") => PgLocks,
            (false, "pg_stat_activity") => PgStatActivity,
            (false, "pg_extension") => PgExtension,
            (false, "pg_shdescription") => PgShDescription,
            (false, "pg_available_extensions") => PgAvailableExtensions,
            (false, n) => Empty(EMPTY_CATALOGS.iter().position(|(e, _)| *e == n)?),
            _ => return None,
        })
    }

    /// The catalog table's OID, its rows' tableoid (None for views and
    /// information_schema).
    pub fn oid(&self) -> Option<u32> {
        let name = self.name();
        let oid = CATALOG_RELATIONS.iter().find(|(n, _)| *n == name).map(|(_, o)| *o)?;
        (oid < FIRST_VIEW_OID).then_some(oid)
    }

    /// The view's name.
    pub fn name(&self) -> &'static str {
        use SystemTable::*;
        match self {
            PgNamespace => "pg_namespace",
            PgClass => "pg_class",
            PgAttribute => "pg_attribute",
            PgType => "pg_type",
            PgDatabase => "pg_database",
            PgRoles => "pg_roles",
            PgUser => "pg_user",
            PgPartitionedTable => "pg_partitioned_table",
            PgInherits => "pg_inherits",
            PgIndex => "pg_index",
            PgTables => "pg_tables",
            InfoTables => "tables",
            InfoSchemata => "schemata",
            InfoDomains => "domains",
            InfoDomainConstraints => "domain_constraints",
            InfoViews => "views",
            InfoTriggers => "triggers",
            InfoTriggeredUpdateColumns => "triggered_update_columns",
            InfoTablePrivileges(false) => "table_privileges",
            InfoTablePrivileges(true) => "role_table_grants",
            InfoColumns => "columns",
            PgConstraint => "pg_constraint",
            PgAm => "pg_am",
            PgCursors => "pg_cursors",
            PgDescription => "pg_description",
            PgAttrdef => "pg_attrdef",
            InfoTableConstraints => "table_constraints",
            InfoKeyColumnUsage => "key_column_usage",
            InfoReferentialConstraints => "referential_constraints",
            InfoConstraintColumnUsage => "constraint_column_usage",
            PgCollation => "pg_collation",
            PgTrigger => "pg_trigger",
            PgSequence => "pg_sequence",
            PgSequences => "pg_sequences",
            PgOpclass => "pg_opclass",
            PgProc => "pg_proc",
            PgLanguage => "pg_language",
            PgSettings => "pg_settings",
            PgDepend => "pg_depend",
            PgTablespace => "pg_tablespace",
            PgEnum => "pg_enum",
            PgLocks => "pg_locks",
            PgStatActivity => "pg_stat_activity",
            PgExtension => "pg_extension",
            PgShDescription => "pg_shdescription",
            PgAvailableExtensions => "pg_available_extensions",
            Empty(i) => EMPTY_CATALOGS[*i].0,
        }
    }

    /// Column names and types; a pg_catalog relation's identifiers are of
    /// type name, as in PostgreSQL (so `array_agg(attname)` is a name[]).
    pub fn columns(&self) -> Vec<(&'static str, DataType)> {
        use DataType::{Bool, Int2, Int4, Name, Oid, QChar, Text};
        use SystemTable::*;
        match self {
            PgNamespace => {
                vec![
                    ("oid", Oid),
                    ("nspname", Name),
                    ("nspowner", Oid),
                    ("nspacl", Text.array_of()),
                ]
            }
            PgProc => builtin_rows::proc_columns(),
            PgExtension => vec![
                ("oid", Oid),
                ("extname", Name),
                ("extowner", Oid),
                ("extnamespace", Oid),
                ("extrelocatable", Bool),
                ("extversion", Text),
                ("extconfig", Oid.array_of()),
                ("extcondition", Text.array_of()),
            ],
            PgShDescription => vec![("objoid", Oid), ("classoid", Oid), ("description", Text)],
            PgAvailableExtensions => vec![
                ("name", Name),
                ("default_version", Text),
                ("installed_version", Text),
                ("comment", Text),
            ],
            PgLanguage => builtin_rows::language_columns(),
            PgSettings => builtin_rows::settings_columns(),
            PgDepend => depend::columns(),
            PgLocks => activity::lock_columns(),
            PgStatActivity => activity::activity_columns(),
            PgEnum => vec![
                ("oid", Oid),
                ("enumtypid", Oid),
                ("enumsortorder", DataType::Float4),
                ("enumlabel", Name),
            ],
            PgTablespace => vec![
                ("oid", Oid),
                ("spcname", Name),
                ("spcowner", Oid),
                ("spcacl", Text.array_of()),
                ("spcoptions", Text.array_of()),
            ],
            PgClass => vec![
                ("oid", Oid),
                ("relname", Name),
                ("relnamespace", Oid),
                ("relkind", QChar),
                ("relowner", Oid),
                ("relam", Oid),
                ("reltuples", DataType::Float8),
                ("relhasindex", Bool),
                ("relpersistence", QChar),
                ("relispartition", Bool),
                ("relchecks", Int2),
                ("relnatts", Int2),
                ("relhastriggers", Bool),
                ("relhasrules", Bool),
                ("relrowsecurity", Bool),
                ("relforcerowsecurity", Bool),
                ("relhassubclass", Bool),
                ("relisshared", Bool),
                ("reltablespace", Oid),
                ("reltoastrelid", Oid),
                ("reloftype", Oid),
                ("reltype", Oid),
                ("relfilenode", Oid),
                ("relreplident", QChar),
                ("relpages", Int4),
                ("relallvisible", Int4),
                ("reloptions", Text.array_of()),
                ("relacl", Text.array_of()),
                ("relpartbound", Text),
                ("relispopulated", Bool),
                ("relrewrite", Oid),
                // xid in PostgreSQL; always 0 (frozen) here.
                ("relfrozenxid", Oid),
                ("relminmxid", Oid),
            ],
            PgAttribute => vec![
                ("attrelid", Oid),
                ("attname", Name),
                ("atttypid", Oid),
                ("attnum", Int2),
                ("atttypmod", Int4),
                ("attnotnull", Bool),
                ("attisdropped", Bool),
                ("atthasdef", Bool),
                ("attlen", Int2),
                ("attndims", Int4),
                ("attidentity", QChar),
                ("attgenerated", QChar),
                ("attcollation", Oid),
                ("attstattarget", Int4),
                ("attstorage", QChar),
                ("attalign", QChar),
                ("attislocal", Bool),
                ("attinhcount", Int4),
                ("attcompression", QChar),
                ("atthasmissing", Bool),
                ("attmissingval", Text),
                ("attoptions", Text.array_of()),
                ("attfdwoptions", Text.array_of()),
                ("attacl", Text.array_of()),
            ],
            PgType => vec![
                ("oid", Oid),
                ("typname", Name),
                ("typnamespace", Oid),
                ("typowner", Oid),
                ("typlen", Int2),
                ("typbyval", Bool),
                ("typtype", QChar),
                ("typcategory", QChar),
                ("typispreferred", Bool),
                ("typisdefined", Bool),
                ("typdelim", QChar),
                ("typrelid", Oid),
                ("typelem", Oid),
                ("typarray", Oid),
                ("typnotnull", Bool),
                ("typbasetype", Oid),
                ("typtypmod", Int4),
                ("typndims", Int4),
                ("typcollation", Oid),
                ("typdefault", Text),
                ("typsubscript", DataType::Reg(sqltypes::RegKind::Proc)),
                ("typinput", DataType::Reg(sqltypes::RegKind::Proc)),
                ("typoutput", DataType::Reg(sqltypes::RegKind::Proc)),
                ("typreceive", DataType::Reg(sqltypes::RegKind::Proc)),
                ("typsend", DataType::Reg(sqltypes::RegKind::Proc)),
                ("typmodin", DataType::Reg(sqltypes::RegKind::Proc)),
                ("typmodout", DataType::Reg(sqltypes::RegKind::Proc)),
                ("typanalyze", DataType::Reg(sqltypes::RegKind::Proc)),
                ("typalign", QChar),
                ("typstorage", QChar),
                ("typdefaultbin", Text),
                ("typacl", Text.array_of()),
            ],
            PgDatabase => vec![
                ("oid", Oid),
                ("datname", Name),
                ("datdba", Oid),
                ("encoding", Int4),
                ("datlocprovider", QChar),
                ("datistemplate", Bool),
                ("datallowconn", Bool),
                ("datconnlimit", Int4),
                ("datfrozenxid", Oid),
                ("datminmxid", Oid),
                ("dattablespace", Oid),
                ("datcollate", Text),
                ("datctype", Text),
                ("daticulocale", Text),
                ("datcollversion", Text),
                ("datacl", Text.array_of()),
            ],
            PgRoles => vec![
                ("rolname", Name),
                ("rolsuper", Bool),
                ("rolinherit", Bool),
                ("rolcreaterole", Bool),
                ("rolcreatedb", Bool),
                ("rolcanlogin", Bool),
                ("rolreplication", Bool),
                ("rolconnlimit", Int4),
                ("rolpassword", Text),
                ("rolvaliduntil", DataType::TimestampTz),
                ("rolbypassrls", Bool),
                ("rolconfig", Text.array_of()),
                ("oid", Oid),
            ],
            PgUser => vec![
                ("usename", Name),
                ("usesysid", Oid),
                ("usecreatedb", Bool),
                ("usesuper", Bool),
                ("userepl", Bool),
                ("usebypassrls", Bool),
                ("passwd", Text),
                ("valuntil", DataType::TimestampTz),
                ("useconfig", Text.array_of()),
            ],
            PgPartitionedTable => {
                vec![
                    ("partrelid", Oid),
                    ("partstrat", Text),
                    ("partnatts", Int2),
                    ("partdefid", Oid),
                    ("partattrs", DataType::Int2Vector),
                    ("partclass", DataType::OidVector),
                    ("partcollation", DataType::OidVector),
                    ("partexprs", Text),
                ]
            }
            PgInherits => vec![
                ("inhrelid", Oid),
                ("inhparent", Oid),
                ("inhseqno", Int4),
                ("inhdetachpending", Bool),
            ],
            PgIndex => vec![
                ("indexrelid", Oid),
                ("indrelid", Oid),
                ("indisunique", Bool),
                ("indisprimary", Bool),
                ("indnatts", Int2),
                ("indnkeyatts", Int2),
                ("indisexclusion", Bool),
                ("indimmediate", Bool),
                ("indisclustered", Bool),
                ("indisvalid", Bool),
                ("indisready", Bool),
                ("indislive", Bool),
                ("indisreplident", Bool),
                ("indnullsnotdistinct", Bool),
                ("indkey", DataType::Int2Vector),
                ("indcollation", DataType::OidVector),
                ("indclass", DataType::OidVector),
                ("indoption", DataType::Int2Vector),
                ("indexprs", Text),
                ("indpred", Text),
            ],
            PgTables => vec![
                ("schemaname", Name),
                ("tablename", Name),
                ("tableowner", Name),
                ("hasindexes", Bool),
            ],
            InfoTables => vec![
                ("table_catalog", Text),
                ("table_schema", Text),
                ("table_name", Text),
                ("table_type", Text),
                ("is_insertable_into", Text),
            ],
            InfoTablePrivileges(_) => vec![
                ("grantor", Text),
                ("grantee", Text),
                ("table_catalog", Text),
                ("table_schema", Text),
                ("table_name", Text),
                ("privilege_type", Text),
                ("is_grantable", Text),
                ("with_hierarchy", Text),
            ],
            InfoSchemata => vec![
                ("catalog_name", Text),
                ("schema_name", Text),
                ("schema_owner", Text),
                ("default_character_set_catalog", Text),
                ("default_character_set_schema", Text),
                ("default_character_set_name", Text),
                ("sql_path", Text),
            ],
            InfoViews => vec![
                ("table_catalog", Text),
                ("table_schema", Text),
                ("table_name", Text),
                ("view_definition", Text),
                ("check_option", Text),
                ("is_updatable", Text),
                ("is_insertable_into", Text),
                ("is_trigger_updatable", Text),
                ("is_trigger_deletable", Text),
                ("is_trigger_insertable_into", Text),
            ],
            InfoColumns => [
                &[
                    ("table_catalog", Text),
                    ("table_schema", Text),
                    ("table_name", Text),
                    ("column_name", Text),
                    ("ordinal_position", Int4),
                    ("column_default", Text),
                    ("is_nullable", Text),
                    ("data_type", Text),
                ][..],
                &TYPE_FACET_COLUMNS,
                &[
                    ("interval_type", Text),
                    ("interval_precision", Int4),
                    ("character_set_catalog", Text),
                    ("character_set_schema", Text),
                    ("character_set_name", Text),
                    ("collation_catalog", Text),
                    ("collation_schema", Text),
                    ("collation_name", Text),
                    ("domain_catalog", Text),
                    ("domain_schema", Text),
                    ("domain_name", Text),
                    ("udt_catalog", Text),
                    ("udt_schema", Text),
                    ("udt_name", Text),
                    ("scope_catalog", Text),
                    ("scope_schema", Text),
                    ("scope_name", Text),
                    ("maximum_cardinality", Int4),
                    ("dtd_identifier", Text),
                    ("is_self_referencing", Text),
                    ("is_identity", Text),
                    ("identity_generation", Text),
                    ("identity_start", Text),
                    ("identity_increment", Text),
                    ("identity_maximum", Text),
                    ("identity_minimum", Text),
                    ("identity_cycle", Text),
                    ("is_generated", Text),
                    ("generation_expression", Text),
                    ("is_updatable", Text),
                ][..],
            ]
            .concat(),
            InfoDomains => [
                &[
                    ("domain_catalog", Text),
                    ("domain_schema", Text),
                    ("domain_name", Text),
                    ("data_type", Text),
                ][..],
                &TYPE_FACET_COLUMNS,
                &[
                    ("domain_default", Text),
                    ("udt_catalog", Text),
                    ("udt_schema", Text),
                    ("udt_name", Text),
                ],
            ]
            .concat(),
            InfoDomainConstraints => vec![
                ("constraint_catalog", Text),
                ("constraint_schema", Text),
                ("constraint_name", Text),
                ("domain_catalog", Text),
                ("domain_schema", Text),
                ("domain_name", Text),
                ("is_deferrable", Text),
                ("initially_deferred", Text),
            ],
            PgAm => vec![
                ("oid", Oid),
                ("amname", Name),
                ("amtype", QChar),
                ("amhandler", DataType::Reg(sqltypes::RegKind::Proc)),
            ],
            PgCollation => vec![
                ("oid", Oid),
                ("collname", Name),
                ("collnamespace", Oid),
                ("collowner", Oid),
                ("collprovider", QChar),
                ("collisdeterministic", Bool),
                ("collencoding", Int4),
                ("collcollate", Text),
                ("collctype", Text),
            ],
            Empty(i) => EMPTY_CATALOGS[*i]
                .1
                .iter()
                .map(|(n, oid)| (*n, DataType::from_oid(*oid).unwrap_or(Text)))
                .collect(),
            PgOpclass => vec![
                ("oid", Oid),
                ("opcmethod", Oid),
                ("opcname", Name),
                ("opcnamespace", Oid),
                ("opcowner", Oid),
                ("opcfamily", Oid),
                ("opcintype", Oid),
                ("opcdefault", Bool),
                ("opckeytype", Oid),
            ],
            PgSequence => vec![
                ("seqrelid", Oid),
                ("seqtypid", Oid),
                ("seqstart", DataType::Int8),
                ("seqincrement", DataType::Int8),
                ("seqmax", DataType::Int8),
                ("seqmin", DataType::Int8),
                ("seqcache", DataType::Int8),
                ("seqcycle", Bool),
            ],
            PgSequences => vec![
                ("schemaname", Name),
                ("sequencename", Name),
                ("sequenceowner", Name),
                ("data_type", DataType::Reg(sqltypes::RegKind::Type)),
                ("start_value", DataType::Int8),
                ("min_value", DataType::Int8),
                ("max_value", DataType::Int8),
                ("increment_by", DataType::Int8),
                ("cycle", Bool),
                ("cache_size", DataType::Int8),
                ("last_value", DataType::Int8),
            ],
            PgTrigger => vec![
                ("oid", Oid),
                ("tgrelid", Oid),
                ("tgparentid", Oid),
                ("tgname", Name),
                ("tgfoid", Oid),
                ("tgtype", Int2),
                ("tgenabled", QChar),
                ("tgisinternal", Bool),
                ("tgconstrrelid", Oid),
                ("tgconstrindid", Oid),
                ("tgconstraint", Oid),
                ("tgdeferrable", Bool),
                ("tginitdeferred", Bool),
                ("tgnargs", Int2),
                ("tgattr", DataType::Int2Vector),
                ("tgargs", DataType::Bytea),
                ("tgqual", Text),
                ("tgoldtable", Name),
                ("tgnewtable", Name),
            ],
            InfoTriggers => vec![
                ("trigger_catalog", Text),
                ("trigger_schema", Text),
                ("trigger_name", Text),
                ("event_manipulation", Text),
                ("event_object_catalog", Text),
                ("event_object_schema", Text),
                ("event_object_table", Text),
                ("action_order", Int4),
                ("action_condition", Text),
                ("action_statement", Text),
                ("action_orientation", Text),
                ("action_timing", Text),
                ("action_reference_old_table", Text),
                ("action_reference_new_table", Text),
                ("action_reference_old_row", Text),
                ("action_reference_new_row", Text),
                ("created", DataType::TimestampTz),
            ],
            InfoTriggeredUpdateColumns => vec![
                ("trigger_catalog", Text),
                ("trigger_schema", Text),
                ("trigger_name", Text),
                ("event_object_catalog", Text),
                ("event_object_schema", Text),
                ("event_object_table", Text),
                ("event_object_column", Text),
            ],
            PgDescription => {
                vec![("objoid", Oid), ("classoid", Oid), ("objsubid", Int4), ("description", Text)]
            }
            PgAttrdef => {
                vec![("oid", Oid), ("adrelid", Oid), ("adnum", Int2), ("adbin", Text)]
            }
            PgCursors => vec![
                ("name", Text),
                ("statement", Text),
                ("is_holdable", Bool),
                ("is_binary", Bool),
                ("is_scrollable", Bool),
                ("creation_time", DataType::TimestampTz),
            ],
            PgConstraint => vec![
                ("oid", Oid),
                ("conname", Name),
                ("connamespace", Oid),
                ("contype", QChar),
                ("condeferrable", Bool),
                ("condeferred", Bool),
                ("convalidated", Bool),
                ("conrelid", Oid),
                ("conindid", Oid),
                ("confrelid", Oid),
                ("confupdtype", QChar),
                ("confdeltype", QChar),
                ("confmatchtype", QChar),
                ("conparentid", Oid),
                ("contypid", Oid),
                ("conislocal", Bool),
                ("coninhcount", Int4),
                ("connoinherit", Bool),
                ("conkey", Int2.array_of()),
                ("confkey", Int2.array_of()),
                ("conbin", Text),
            ],
            InfoTableConstraints => vec![
                ("constraint_catalog", Text),
                ("constraint_schema", Text),
                ("constraint_name", Text),
                ("table_catalog", Text),
                ("table_schema", Text),
                ("table_name", Text),
                ("constraint_type", Text),
                ("is_deferrable", Text),
                ("initially_deferred", Text),
                ("enforced", Text),
            ],
            InfoKeyColumnUsage => vec![
                ("constraint_catalog", Text),
                ("constraint_schema", Text),
                ("constraint_name", Text),
                ("table_catalog", Text),
                ("table_schema", Text),
                ("table_name", Text),
                ("column_name", Text),
                ("ordinal_position", Int4),
                ("position_in_unique_constraint", Int4),
            ],
            InfoReferentialConstraints => vec![
                ("constraint_catalog", Text),
                ("constraint_schema", Text),
                ("constraint_name", Text),
                ("unique_constraint_catalog", Text),
                ("unique_constraint_schema", Text),
                ("unique_constraint_name", Text),
                ("match_option", Text),
                ("update_rule", Text),
                ("delete_rule", Text),
            ],
            InfoConstraintColumnUsage => vec![
                ("table_catalog", Text),
                ("table_schema", Text),
                ("table_name", Text),
                ("column_name", Text),
                ("constraint_catalog", Text),
                ("constraint_schema", Text),
                ("constraint_name", Text),
            ],
        }
    }

    /// Builds the rows from `catalog` (and, for pg_cursors, the session's
    /// cursors in `eval`).
    pub fn rows(&self, catalog: &Catalog, eval: &crate::expr::EvalContext) -> Vec<Vec<Value>> {
        let mut rows = self.raw_rows(catalog, eval);
        // OID columns are built from integers; give them their type.
        let oid_cols: Vec<usize> = self
            .columns()
            .iter()
            .enumerate()
            .filter(|(_, (_, t))| *t == DataType::Oid)
            .map(|(i, _)| i)
            .collect();
        for row in &mut rows {
            for &i in &oid_cols {
                if let Some(v) = row.get_mut(i) {
                    if let Some(o) = v.as_oid() {
                        *v = Value::Oid(o);
                    }
                }
            }
        }
        rows
    }

    fn raw_rows(&self, catalog: &Catalog, eval: &crate::expr::EvalContext) -> Vec<Vec<Value>> {
        use SystemTable::*;
        let t = |s: &str| Value::Text(s.to_string());
        let i8 = |v: i64| Value::Int8(v);
        let mut rows = Vec::new();
        match self {
            PgNamespace => {
                rows.push(vec![i8(PG_CATALOG_OID), t("pg_catalog"), i8(10), Value::Null]);
                rows.extend((!catalog.public_dropped).then(|| {
                    let access = catalog.public_access();
                    vec![
                        i8(PUBLIC_NAMESPACE_OID as i64),
                        t("public"),
                        i8(role_oid(catalog, &access.owner) as i64),
                        access.acl_value(),
                    ]
                }));
                rows.push(vec![i8(INFO_SCHEMA_OID), t("information_schema"), i8(10), Value::Null]);
                for sc in catalog.schemas.values() {
                    rows.push(vec![
                        i8(sc.oid as i64),
                        t(&sc.name),
                        i8(role_oid(catalog, &sc.access.owner) as i64),
                        sc.access.acl_value(),
                    ]);
                }
                if catalog.path.relations.contains(&crate::catalog::TEMP_NAMESPACE_OID) {
                    let oid = crate::catalog::TEMP_NAMESPACE_OID as i64;
                    rows.push(vec![
                        i8(oid),
                        t(crate::catalog::TEMP_NAMESPACE_NAME),
                        i8(10),
                        Value::Null,
                    ]);
                }
            }
            PgClass => {
                // Foreign keys are triggers in PostgreSQL, on both tables.
                let referenced: std::collections::HashSet<u32> = catalog
                    .tables
                    .values()
                    .flat_map(|t| t.foreign_keys.iter().map(|f| f.ref_table))
                    .collect();
                let roles = roles_with_oids(catalog);
                for (oid, ns, name, kind) in catalog.relations() {
                    let key = (ns, name.to_string());
                    // Owner and ACL (an index's owner is its table's; it has
                    // no ACL of its own).
                    let owned = |mut row: Vec<Value>| {
                        if let Some(rel) = catalog.relation_in(ns, name) {
                            row[4] = i8(role_oid_among(&roles, &rel.access().owner) as i64);
                            if !matches!(kind, "i" | "I") {
                                row[27] = rel.access().acl_value();
                            }
                            // An index's access method, its key and
                            // INCLUDE columns.
                            if let crate::catalog::Relation::Index(t, i) = &rel {
                                let idx = i.map(|i| &t.indexes[i]);
                                let method = idx.and_then(|i| i.method.as_deref());
                                row[5] = i8(access_methods::method_oid(method).into());
                                row[11] = Value::Int2(match idx {
                                    Some(i) => (i.columns.len() + i.include.len()) as i16,
                                    None => t.primary_key.len() as i16,
                                });
                                // relispartition: attached to the parent's.
                                row[9] = Value::Bool(match idx {
                                    Some(i) => i.parent.is_some(),
                                    None => t.pkey_parent.is_some(),
                                });
                            }
                        }
                        row
                    };
                    if kind == "c" {
                        let Some((d, _)) = catalog.user_types.get(&key) else { continue };
                        let mut row = class_row(oid, ns, name, kind, false, "p");
                        row[4] = i8(role_oid_among(&roles, &d.access.owner) as i64);
                        row[11] = Value::Int2(
                            d.composite.as_ref().map_or(0, |c| c.attributes.len()) as i16,
                        );
                        row[21] = i8(d.oid as i64);
                        rows.push(row);
                        continue;
                    }
                    let Some(tb) =
                        catalog.tables.get(&key).filter(|_| matches!(kind, "r" | "m" | "p"))
                    else {
                        let mut row = class_row(oid, ns, name, kind, false, "p");
                        if let Some(v) = catalog.views.get(&key).filter(|_| kind == "v") {
                            row[12] = Value::Bool(!v.triggers.is_empty());
                            if let Some(c) = v.check_option {
                                let option = Value::Text(format!("check_option={}", c.name()));
                                row[26] =
                                    sqltypes::array::ArrayValue::new(DataType::Text, vec![option])
                                        .into_value();
                            }
                        }
                        rows.push(owned(row));
                        continue;
                    };
                    let has_index = !tb.primary_key.is_empty() || !tb.indexes.is_empty();
                    let persistence = if tb.temporary { "t" } else { "p" };
                    let mut row = class_row(oid, ns, name, kind, has_index, persistence);
                    row[10] = Value::Int2(tb.checks.len() as i16);
                    row[11] = Value::Int2(tb.columns.len() as i16);
                    // Foreign keys are triggers in PostgreSQL.
                    let fks = !tb.foreign_keys.is_empty() || referenced.contains(&oid);
                    row[12] = Value::Bool(fks || !tb.triggers.is_empty());
                    if let Some(mv) = &tb.matview {
                        row[29] = Value::Bool(mv.populated);
                    }
                    row[16] = Value::Bool(catalog.partitions.contains_key(&tb.oid));
                    if let Some(of) = &tb.partition_of {
                        row[9] = Value::Bool(true);
                        let types = catalog
                            .table_by_oid(of.parent)
                            .map(|p| crate::partition::key_types(&p))
                            .unwrap_or_default();
                        row[28] = t(&of.bound.sql(&types));
                    }
                    rows.push(owned(row));
                }
            }
            PgDescription => {
                if !catalog.public_dropped {
                    let ns = PUBLIC_NAMESPACE_OID as i64;
                    rows.push(vec![i8(ns), i8(2615), Value::Int4(0), t(PUBLIC_SCHEMA_COMMENT)]);
                }
                for sc in catalog.schemas.values() {
                    if let Some(c) = &sc.comment {
                        rows.push(vec![i8(sc.oid as i64), i8(2615), Value::Int4(0), t(c)]);
                    }
                }
                let installed = catalog.extensions.values().map(|x| x.oid);
                for oid in std::iter::once(crate::extensions::PLPGSQL_OID).chain(installed) {
                    if let Some(c) = crate::extensions::comment(catalog, oid) {
                        rows.push(vec![
                            i8(oid as i64),
                            i8(PG_EXTENSION_OID),
                            Value::Int4(0),
                            t(&c),
                        ]);
                    }
                }
                // plpgsql's language has its extension's comment.
                let plpgsql = crate::builtins::LANGUAGES.iter().find(|l| l.1 == "plpgsql");
                let comment = crate::extensions::comment(catalog, crate::extensions::PLPGSQL_OID);
                if let (Some(l), Some(c)) = (plpgsql, comment) {
                    rows.push(vec![i8(l.0 as i64), i8(PG_LANGUAGE_OID), Value::Int4(0), t(&c)]);
                }
                for (e, _) in catalog.user_types.values() {
                    if let Some(c) = &e.comment {
                        rows.push(vec![i8(e.oid as i64), i8(PG_TYPE_OID), Value::Int4(0), t(c)]);
                    }
                }
                // The built-in functions' descriptions (JDBC's getFunctions
                // reads them here), then the user's.
                rows.extend_from_slice(builtin_descriptions());
                for f in catalog.functions.values().flatten() {
                    if let Some(c) = &f.comment {
                        rows.push(vec![i8(f.oid as i64), i8(PG_PROC_OID), Value::Int4(0), t(c)]);
                    }
                }
                for (oid, c) in catalog.relation_comments() {
                    rows.push(vec![i8(oid as i64), i8(PG_CLASS_OID), Value::Int4(0), t(c)]);
                }
                for tb in catalog.tables.values() {
                    for (i, col) in tb.columns.iter().enumerate() {
                        if let Some(c) = &col.comment {
                            let n = Value::Int4(i as i32 + 1);
                            rows.push(vec![i8(tb.oid as i64), i8(PG_CLASS_OID), n, t(c)]);
                        }
                    }
                }
            }
            PgAttrdef => {
                for d in catalog.column_defaults() {
                    let oid = depend::attrdef_oid(d.relation, d.position) as i64;
                    let n = Value::Int2(d.position as i16 + 1);
                    rows.push(vec![i8(oid), i8(d.relation as i64), n, t(d.text)]);
                }
            }
            PgCursors => {
                for c in eval.cursors.iter().flat_map(|c| c.infos()) {
                    rows.push(vec![
                        t(&c.name),
                        t(&c.statement),
                        Value::Bool(c.holdable),
                        Value::Bool(false),
                        Value::Bool(c.scrollable),
                        Value::TimestampTz(c.created),
                    ]);
                }
            }
            PgAm => {
                rows.push(vec![i8(2), t("heap"), t("t"), builtin_rows::regproc(3)]);
                for m in access_methods::METHODS {
                    let handler = builtin_rows::regproc(m.handler);
                    rows.push(vec![i8(m.oid.into()), t(m.name), t("i"), handler]);
                }
            }
            PgCollation => {
                for &(oid, name, provider) in COLLATIONS {
                    let enc = -1;
                    let locale = if oid == 100 { Value::Null } else { t(name) };
                    rows.push(vec![
                        i8(oid.into()),
                        t(name),
                        i8(PG_CATALOG_OID),
                        i8(10),
                        t(provider),
                        Value::Bool(true),
                        Value::Int4(enc),
                        locale.clone(),
                        locale,
                    ]);
                }
            }
            Empty(i) if EMPTY_CATALOGS[*i].0 == "pg_auth_members" => {
                // pg_monitor is a member of three predefined roles.
                for group in [3374, 3375, 3377] {
                    rows.push(vec![i8(group), i8(3373), i8(10), Value::Bool(false)]);
                }
                let roles = roles_with_oids(catalog);
                for (oid, r) in &roles {
                    for m in &r.member_of {
                        rows.push(vec![
                            i8(role_oid_among(&roles, &m.role) as i64),
                            i8(*oid),
                            i8(role_oid_among(&roles, &m.grantor) as i64),
                            Value::Bool(m.admin),
                        ]);
                    }
                }
            }
            Empty(i) if EMPTY_CATALOGS[*i].0 == "pg_range" => {
                for k in sqltypes::range::RANGE_KINDS {
                    let [sub, multi, opclass, canonical, subdiff] = k.pg_range();
                    rows.push(vec![
                        i8(k.oid() as i64),
                        i8(sub as i64),
                        i8(multi as i64),
                        i8(0),
                        i8(opclass as i64),
                        builtin_rows::regproc(canonical),
                        builtin_rows::regproc(subdiff),
                    ]);
                }
            }
            Empty(i) if EMPTY_CATALOGS[*i].0 == "pg_default_acl" => {
                let roles = roles_with_oids(catalog);
                for d in &catalog.default_acls {
                    rows.push(vec![
                        i8(d.oid as i64),
                        i8(role_oid_among(&roles, &d.role) as i64),
                        i8(d.namespace as i64),
                        t(&d.objtype.to_string()),
                        crate::acl::acl_array(&d.acl),
                    ]);
                }
            }
            PgTrigger => {
                for table in catalog.trigger_hosts() {
                    for tr in table.triggers {
                        let mut args = Vec::new();
                        for a in &tr.args {
                            args.extend_from_slice(a.as_bytes());
                            args.push(0);
                        }
                        let attr = tr.columns.iter().map(|&c| Value::Int2(c as i16 + 1)).collect();
                        let mut attr = sqltypes::array::ArrayValue::new(DataType::Int2, attr);
                        attr.vector = true;
                        attr.dims.iter_mut().for_each(|d| d.lower = 0);
                        rows.push(vec![
                            i8(tr.oid as i64),
                            i8(table.oid as i64),
                            i8(0),
                            t(&tr.name),
                            i8(tr.function as i64),
                            Value::Int2(tr.tgtype),
                            Value::Text(tr.enabled.to_string()),
                            Value::Bool(false),
                            i8(0),
                            i8(0),
                            i8(0),
                            Value::Bool(false),
                            Value::Bool(false),
                            Value::Int2(tr.args.len() as i16),
                            attr.into_value(),
                            Value::Bytea(args),
                            tr.when.as_ref().map_or(Value::Null, |w| t(w)),
                            Value::Null,
                            Value::Null,
                        ]);
                    }
                }
            }
            InfoTriggers | InfoTriggeredUpdateColumns => {
                rows = crate::func::catalog_info::trigger_rows(catalog, *self == InfoTriggers);
            }
            Empty(_) => {}
            PgProc => rows = builtin_rows::proc_rows(catalog),
            PgExtension => {
                rows.push(vec![
                    i8(crate::extensions::PLPGSQL_OID as i64),
                    t("plpgsql"),
                    i8(10),
                    i8(PG_CATALOG_OID),
                    Value::Bool(false),
                    t("1.0"),
                    Value::Null,
                    Value::Null,
                ]);
                for x in catalog.extensions.values() {
                    let relocatable =
                        crate::extensions::find(&x.name).is_some_and(|e| e.relocatable);
                    rows.push(vec![
                        i8(x.oid as i64),
                        t(&x.name),
                        i8(role_oid(catalog, &x.owner) as i64),
                        i8(x.namespace as i64),
                        Value::Bool(relocatable),
                        t(&x.version),
                        Value::Null,
                        Value::Null,
                    ]);
                }
            }
            PgShDescription => {
                let db = crate::catalog::DATABASE_OID as i64;
                rows.push(vec![i8(db), i8(PG_DATABASE_OID), t(DATABASE_COMMENT)]);
            }
            PgAvailableExtensions => {
                for x in &crate::extensions::AVAILABLE {
                    let installed = match x.name {
                        "plpgsql" => Some(x.version.to_string()),
                        name => catalog.extensions.get(name).map(|d| d.version.clone()),
                    };
                    let installed = installed.map_or(Value::Null, Value::Text);
                    rows.push(vec![t(x.name), t(x.version), installed, t(x.comment)]);
                }
            }
            PgLanguage => rows = builtin_rows::language_rows(),
            PgSettings => rows = builtin_rows::settings_rows(&eval.settings),
            PgDepend => rows = depend::rows(catalog),
            PgLocks => rows = activity::lock_rows(eval),
            PgStatActivity => rows = activity::activity_rows(catalog, eval),
            PgEnum => {
                for (_, k) in catalog.user_types.values() {
                    let crate::catalog::UserTypeKind::Enum(e) = k else { continue };
                    for l in &e.labels {
                        let row = [i8(l.oid as i64), i8(e.oid as i64), Value::Float4(l.sort)];
                        rows.push(row.into_iter().chain([t(&l.label)]).collect());
                    }
                }
            }
            PgTablespace => {
                for (oid, name) in [(1663, "pg_default"), (1664, "pg_global")] {
                    rows.push(vec![i8(oid), t(name), i8(10), Value::Null, Value::Null]);
                }
            }
            PgOpclass => {
                for (oid, am, name, intype) in OPCLASSES {
                    rows.push(vec![
                        i8(*oid as i64),
                        i8(*am as i64),
                        t(name),
                        i8(PG_CATALOG_OID),
                        i8(10),
                        i8(0),
                        i8(*intype as i64),
                        Value::Bool(true),
                        i8(0),
                    ]);
                }
            }
            PgSequence => {
                for sq in catalog.sequences.values() {
                    rows.push(vec![
                        i8(sq.oid as i64),
                        i8(sq.ty.oid as i64),
                        i8(sq.start),
                        i8(sq.increment),
                        i8(sq.max),
                        i8(sq.min),
                        i8(sq.cache),
                        Value::Bool(sq.cycle),
                    ]);
                }
            }
            PgSequences => {
                for sq in catalog.sequences.values() {
                    let ty = sq.ty.to_type();
                    rows.push(vec![
                        t(schema_of(catalog, sq.namespace)),
                        t(&sq.name),
                        t(&sq.access.owner),
                        Value::Reg(Box::new(sqltypes::RegValue {
                            kind: sqltypes::RegKind::Type,
                            oid: ty.oid(),
                            name: ty.to_string(),
                        })),
                        Value::Int8(sq.start),
                        Value::Int8(sq.min),
                        Value::Int8(sq.max),
                        Value::Int8(sq.increment),
                        Value::Bool(sq.cycle),
                        Value::Int8(sq.cache),
                        Value::Null,
                    ]);
                }
            }
            PgAttribute => {
                // Indexes have attributes too: their keys and INCLUDE
                // columns.
                let indexes = catalog
                    .tables
                    .values()
                    .flat_map(|t| index_attributes(t))
                    .map(|(oid, columns)| (oid, Cow::Owned(columns)));
                let composites = catalog.user_types.values().filter_map(|(d, _)| {
                    let c = d.composite.as_ref()?;
                    Some((c.relid, Cow::Owned(c.columns(catalog))))
                });
                for (oid, columns) in relation_columns(catalog)
                    .into_iter()
                    .map(|(oid, _, _, columns)| (oid, columns))
                    .chain(indexes)
                    .chain(composites)
                {
                    for (i, c) in columns.iter().enumerate() {
                        rows.push(vec![
                            i8(oid as i64),
                            t(&c.name),
                            i8(c.ty.oid as i64),
                            Value::Int2(i as i16 + 1),
                            Value::Int4(c.ty.typmod),
                            Value::Bool(!c.nullable),
                            Value::Bool(false),
                            Value::Bool(c.default.is_some() && c.identity.is_none()),
                            Value::Int2(c.ty.to_type().typlen()),
                            Value::Int4(c.ty.to_type().elem().is_some() as i32),
                            t(&c.identity.map(String::from).unwrap_or_default()),
                            t(if c.generated { "s" } else { "" }),
                            i8(c.collation.map_or_else(|| collation(&c.ty.to_type()), i64::from)),
                        ]);
                        // pg_dump writes SET STATISTICS/STORAGE for values
                        // other than these defaults, and leaves a column
                        // that is not attislocal out of CREATE TABLE.
                        let io = io_type_oid(&c.ty.to_type());
                        let (align, storage) = crate::builtins::align_storage(io);
                        let row = rows.last_mut().expect("just pushed");
                        row.extend([
                            Value::Int4(-1),
                            t(storage),
                            t(align),
                            Value::Bool(true),
                            Value::Int4(0),
                            t(""),
                            Value::Bool(false),
                        ]);
                        row.extend([Value::Null, Value::Null, Value::Null, Value::Null]);
                    }
                }
            }
            PgType => {
                let scalars =
                    sqltypes::SCALAR_TYPE_OIDS.iter().filter_map(|&o| DataType::from_oid(o));
                let builtin = PG_CATALOG_OID as u32;
                let enums = catalog.user_types.values().filter_map(|(d, k)| match k {
                    UserTypeKind::Enum(t) => Some((DataType::Enum(t.clone()), d.namespace)),
                    UserTypeKind::Composite(r) => Some((DataType::Record(r.clone()), d.namespace)),
                    UserTypeKind::Domain(_) => None,
                });
                let record = DataType::Record(sqltypes::RecordType::anonymous(vec![]));
                for (ty, ns) in scalars
                    .chain(std::iter::once(record))
                    .map(|t| (t, builtin))
                    .chain(enums)
                    .flat_map(|(ty, ns)| {
                        let array = ty.array_of();
                        [(ty, ns), (array, ns)]
                    })
                    .chain([(DataType::Unknown, builtin), (DataType::Void, builtin)])
                {
                    rows.push(pg_type_row(&ty, ns));
                }
                for (_, k) in catalog.user_types.values() {
                    if let UserTypeKind::Domain(dom) = k {
                        rows.extend(domain_type_rows(dom));
                    }
                }
                let roles = roles_with_oids(catalog);
                for (d, _) in catalog.user_types.values() {
                    let owner = i8(role_oid_among(&roles, &d.access.owner) as i64);
                    for row in rows
                        .iter_mut()
                        .filter(|r| r[0].as_oid().is_some_and(|o| o == d.oid || o == d.array_oid))
                    {
                        row[3] = owner.clone();
                        if let Some(acl) = row.last_mut() {
                            *acl = d.access.acl_value();
                        }
                        // A composite type's typrelid is its pg_class row.
                        if let Some(c) =
                            d.composite.as_ref().filter(|_| row[0].as_oid() == Some(d.oid))
                        {
                            row[11] = Value::Oid(c.relid);
                        }
                    }
                }
            }
            PgDatabase => rows.push(vec![
                i8(crate::catalog::DATABASE_OID as i64),
                t("postgres"),
                i8(10),
                Value::Int4(6),
                t("c"),
                Value::Bool(false),
                Value::Bool(true),
                Value::Int4(-1),
                i8(0),
                i8(1),
                i8(1663),
                t(crate::settings::COLLATION),
                t(crate::settings::COLLATION),
                Value::Null,
                Value::Null,
                catalog.database_access.acl_value(),
            ]),
            PgRoles => {
                for (oid, r) in roles_with_oids(catalog) {
                    // The bootstrap superuser has every attribute, as
                    // initdb's does.
                    let all = r.superuser && oid == 10;
                    rows.push(vec![
                        t(&r.name),
                        Value::Bool(r.superuser),
                        Value::Bool(r.inherit),
                        Value::Bool(all || r.createrole),
                        Value::Bool(all || r.createdb),
                        Value::Bool(r.login),
                        Value::Bool(all),
                        Value::Int4(-1),
                        t("********"),
                        Value::Null,
                        Value::Bool(all),
                        Value::Null,
                        i8(oid),
                    ]);
                }
                for &(name, oid) in PREDEFINED_ROLES {
                    let mut row = vec![t(name), Value::Bool(false), Value::Bool(true)];
                    row.extend([false; 4].map(Value::Bool));
                    row.extend([Value::Int4(-1), t("********"), Value::Null]);
                    row.extend([Value::Bool(false), Value::Null, i8(oid as i64)]);
                    rows.push(row);
                }
            }
            PgUser => {
                for (oid, r) in roles_with_oids(catalog).into_iter().filter(|(_, r)| r.login) {
                    let all = r.superuser && oid == 10;
                    rows.push(vec![
                        t(&r.name),
                        i8(oid),
                        Value::Bool(all || r.createdb),
                        Value::Bool(r.superuser),
                        Value::Bool(all),
                        Value::Bool(all),
                        t("********"),
                        Value::Null,
                        Value::Null,
                    ]);
                }
            }
            PgPartitionedTable => {
                for tb in catalog.tables.values() {
                    let Some(key) = &tb.partition_key else { continue };
                    let default =
                        catalog.partitions.get(&tb.oid).into_iter().flatten().find(|p| {
                            p.partition_of.as_ref().is_some_and(|o| o.bound.is_default())
                        });
                    let n = key.columns.len();
                    let vector = |ty: DataType, vals: Vec<Value>| sqltypes::array::vector(ty, vals);
                    rows.push(vec![
                        i8(tb.oid as i64),
                        t(&key.strategy.code().to_string()),
                        Value::Int2(n as i16),
                        i8(default.map_or(0, |d| d.oid as i64)),
                        vector(
                            DataType::Int2,
                            key.columns.iter().map(|&c| Value::Int2(c as i16 + 1)).collect(),
                        ),
                        vector(DataType::Oid, vec![Value::Oid(0); n]),
                        vector(
                            DataType::Oid,
                            key.columns
                                .iter()
                                .map(|&c| Value::Oid(collation(&tb.columns[c].ty.to_type()) as u32))
                                .collect(),
                        ),
                        Value::Null,
                    ]);
                }
            }
            PgInherits => {
                let link = |child: u32, parent: u32| {
                    vec![i8(child as i64), i8(parent as i64), Value::Int4(1), Value::Bool(false)]
                };
                for tb in catalog.tables.values() {
                    if let Some(of) = &tb.partition_of {
                        rows.push(link(tb.oid, of.parent));
                    }
                    // A partition's indexes attached to its parent's.
                    rows.extend(tb.pkey_parent.map(|p| link(tb.pkey_oid, p)));
                    rows.extend(tb.indexes.iter().filter_map(|i| Some(link(i.oid, i.parent?))));
                }
            }
            PgIndex => {
                for tb in catalog.tables.values() {
                    if tb.pkey_name.is_some() {
                        let types: Vec<DataType> =
                            tb.primary_key.iter().map(|&c| tb.columns[c].ty.to_type()).collect();
                        let key = (&tb.primary_key[..], &types[..]);
                        let valid = catalog.index_valid(tb, tb.pkey_oid);
                        rows.push(index_row(tb, tb.pkey_oid, key, (true, true, valid), None));
                    }
                    for idx in &tb.indexes {
                        let types = idx.key_types(tb);
                        let key = (&idx.columns[..], &types[..]);
                        let flags = (idx.unique, false, catalog.index_valid(tb, idx.oid));
                        rows.push(index_row(tb, idx.oid, key, flags, Some(idx)));
                    }
                }
            }
            PgTables => {
                for tb in catalog.tables.values().filter(|t| t.matview.is_none()) {
                    let has_index = !tb.primary_key.is_empty() || !tb.indexes.is_empty();
                    rows.push(vec![
                        t(schema_of(catalog, tb.namespace)),
                        t(&tb.name),
                        t(&tb.access.owner),
                        Value::Bool(has_index),
                    ]);
                }
            }
            // Materialized views are not in information_schema.
            InfoTables => {
                for tb in catalog.tables.values().filter(|t| t.matview.is_none()) {
                    let kind = if tb.temporary { "LOCAL TEMPORARY" } else { "BASE TABLE" };
                    let schema = schema_of(catalog, tb.namespace);
                    rows.push(vec![t("postgres"), t(schema), t(&tb.name), t(kind), t("YES")]);
                }
                for v in catalog.views.values() {
                    let schema = schema_of(catalog, v.namespace);
                    let insertable = view_updatable(catalog, v);
                    let row = [t("postgres"), t(schema), t(&v.name), t("VIEW"), yes_no(insertable)];
                    rows.push(row.to_vec());
                }
            }
            InfoSchemata => {
                let mut schemas = vec![
                    ("pg_catalog", "postgres".to_string()),
                    ("information_schema", "postgres".to_string()),
                ];
                if !catalog.public_dropped {
                    schemas.push(("public", catalog.public_access().owner.clone()));
                }
                schemas.extend(
                    catalog.schemas.values().map(|s| (s.name.as_str(), s.access.owner.clone())),
                );
                schemas.sort();
                for (name, owner) in schemas {
                    let mut row = vec![t("postgres"), t(name), t(&owner)];
                    row.extend([Value::Null, Value::Null, Value::Null, Value::Null]);
                    rows.push(row);
                }
            }
            InfoTablePrivileges(role_grants) => {
                let user: &str = if eval.user.is_empty() { "postgres" } else { &eval.user };
                // Grants of or to roles whose privileges the user has (a
                // superuser has every role's); table_privileges shows grants
                // to PUBLIC too.
                let shown = |item: &crate::acl::AclItem| {
                    let to_public = item.grantee.is_empty();
                    (to_public && !role_grants)
                        || catalog.has_privs_of(user, &item.grantor)
                        || !to_public && catalog.has_privs_of(user, &item.grantee)
                };
                let tables = catalog.tables.values().filter(|t| t.matview.is_none());
                let tables = tables.map(|t| (t.namespace, &t.name, &t.access));
                let views = catalog.views.values().map(|v| (v.namespace, &v.name, &v.access));
                for (ns, name, access) in tables.chain(views) {
                    let schema = schema_of(catalog, ns);
                    for item in access.items(crate::acl::ObjKind::Table).iter().filter(|i| shown(i))
                    {
                        for (bit, privilege) in crate::acl::TABLE_PRIVILEGES {
                            if item.privs & bit == 0 {
                                continue;
                            }
                            let grantee =
                                if item.grantee.is_empty() { "PUBLIC" } else { &item.grantee };
                            let owner_like = !item.grantee.is_empty()
                                && catalog.has_privs_of(&item.grantee, &access.owner);
                            let grantable = item.grantable & bit != 0 || owner_like;
                            rows.push(vec![
                                t(&item.grantor),
                                t(grantee),
                                t("postgres"),
                                t(schema),
                                t(name),
                                t(privilege),
                                yes_no(grantable),
                                yes_no(bit == crate::acl::SELECT),
                            ]);
                        }
                    }
                }
            }
            InfoViews => {
                for v in catalog.views.values() {
                    let schema = schema_of(catalog, v.namespace);
                    let def = crate::func::catalog_info::view_def(catalog, v.oid);
                    let mut row = vec![t("postgres"), t(schema), t(&v.name)];
                    row.push(def.map(|d| t(&d)).unwrap_or(Value::Null));
                    let check = v.check_option.map_or("NONE".into(), |c| c.name().to_uppercase());
                    let updatable = yes_no(view_updatable(catalog, v));
                    let instead = |bit| yes_no(v.has_instead(bit));
                    use crate::catalog::TriggerDef as T;
                    row.extend([t(&check), updatable.clone(), updatable]);
                    row.extend([instead(T::UPDATE), instead(T::DELETE), instead(T::INSERT)]);
                    rows.push(row);
                }
            }
            InfoColumns => {
                let matview =
                    |oid: u32| catalog.table_by_oid(oid).is_some_and(|t| t.matview.is_some());
                // A view's columns that are its table's can be assigned.
                let assignable: std::collections::HashMap<u32, Option<Vec<bool>>> = catalog
                    .views
                    .values()
                    .map(|v| (v.oid, crate::planner::views::auto_updatable(catalog, v)))
                    .collect();
                for (oid, namespace, name, columns) in
                    relation_columns(catalog).into_iter().filter(|(oid, ..)| !matview(*oid))
                {
                    let assignable = assignable.get(&oid);
                    let table = catalog.table_by_oid(oid);
                    for (i, c) in columns.iter().enumerate() {
                        let updatable = match assignable {
                            Some(cols) => cols.as_ref().is_some_and(|c| c.get(i) == Some(&true)),
                            None => true,
                        };
                        let ty = c.ty.to_type();
                        // As pg_get_expr shows them; an identity column's
                        // nextval is none.
                        let shown = |e: &str| {
                            let role = crate::deparse::Role::Value(&c.ty);
                            t(&crate::deparse::shown_expr(
                                catalog,
                                table.as_deref(),
                                e,
                                role,
                                false,
                            ))
                        };
                        let default =
                            c.default.as_deref().filter(|_| !c.generated && c.identity.is_none());
                        let mut row = vec![
                            t("postgres"),
                            t(schema_of(catalog, namespace)),
                            t(name),
                            t(&c.name),
                            Value::Int4(i as i32 + 1),
                            default.map(shown).unwrap_or(Value::Null),
                            yes_no(c.nullable),
                            t(info_type_name(c.ty.domain.as_deref(), &ty)),
                        ];
                        row.extend(type_facets(&ty, c.ty.time_precision()));
                        // interval_type and _precision, the character set's
                        // names: none
                        row.extend(std::iter::repeat_n(Value::Null, 5));
                        // The collation's, when it is not the default.
                        let collation = c.collation.unwrap_or(collation(&ty) as u32);
                        row.extend(match collation_name(collation) {
                            Some(name) if collation != 100 => info_names("pg_catalog", name),
                            _ => vec![Value::Null; 3],
                        });
                        row.extend(match &c.ty.domain {
                            Some(d) => info_names(schema_of(catalog, d.def.namespace), &d.def.name),
                            None => vec![Value::Null, Value::Null, Value::Null],
                        });
                        row.extend(info_names(udt_schema(catalog, &ty), &ty.name()));
                        // scope_* and maximum_cardinality: none
                        row.extend(std::iter::repeat_n(Value::Null, 4));
                        row.push(t(&(i + 1).to_string()));
                        row.push(t("NO"));
                        row.push(yes_no(c.identity.is_some()));
                        row.push(match c.identity {
                            Some('a') => t("ALWAYS"),
                            Some(_) => t("BY DEFAULT"),
                            None => Value::Null,
                        });
                        let seq = c.identity.and_then(|_| catalog.owned_sequence(oid, &c.name));
                        let num = |f: fn(&crate::sequence::SequenceDef) -> i64| {
                            seq.map(|s| t(&f(s).to_string())).unwrap_or(Value::Null)
                        };
                        row.extend([
                            num(|s| s.start),
                            num(|s| s.increment),
                            num(|s| s.max),
                            num(|s| s.min),
                        ]);
                        row.push(yes_no(seq.is_some_and(|s| s.cycle)));
                        let expression = c.default.as_deref().filter(|_| c.generated);
                        row.extend([
                            t(if c.generated { "ALWAYS" } else { "NEVER" }),
                            expression.map(shown).unwrap_or(Value::Null),
                            yes_no(updatable),
                        ]);
                        rows.push(row);
                    }
                }
            }
            InfoDomains => {
                for (d, k) in catalog.user_types.values() {
                    let (Some(spec), UserTypeKind::Domain(dom)) = (&d.domain, k) else { continue };
                    let mut row = info_names(schema_of(catalog, d.namespace), &d.name);
                    // format_type of the base type, without its modifier.
                    row.push(match (&dom.base, dom.ty.elem()) {
                        (None, Some(e)) => t(&format!("{}[]", sql_type_name(e))),
                        _ => t(info_type_name(Some(dom), &dom.ty)),
                    });
                    row.extend(type_facets(&dom.ty, spec.base.time_precision()));
                    row.push(spec.default.as_deref().map_or(Value::Null, t));
                    row.extend(info_names(udt_schema(catalog, &dom.ty), &dom.ty.name()));
                    rows.push(row);
                }
            }
            InfoDomainConstraints => {
                for d in catalog.user_types.values().map(|(d, _)| d) {
                    let schema = schema_of(catalog, d.namespace);
                    for c in d.domain.iter().flat_map(|s| &s.checks) {
                        let mut row = info_names(schema, &c.name);
                        row.extend(info_names(schema, &d.name));
                        row.extend([t("NO"), t("NO")]);
                        rows.push(row);
                    }
                }
            }
            PgConstraint => {
                for c in constraints(catalog) {
                    let fk = c.fk;
                    let code = |f: fn(&ForeignKeyDef) -> &'static str| t(fk.map(f).unwrap_or(" "));
                    rows.push(vec![
                        i8(c.oid as i64),
                        t(&c.name),
                        i8(c.table.namespace as i64),
                        t(c.kind),
                        Value::Bool(c.deferral.is_some()),
                        Value::Bool(c.deferral == Some(true)),
                        Value::Bool(c.validated),
                        i8(c.table.oid as i64),
                        i8(c.index_oid as i64),
                        i8(fk.map(|f| f.ref_table as i64).unwrap_or(0)),
                        code(|f| f.on_update.code()),
                        code(|f| f.on_delete.code()),
                        code(|f| if f.match_full { "f" } else { "s" }),
                        i8(c.parent as i64),
                        i8(0),
                        Value::Bool(c.parent == 0),
                        Value::Int4(i32::from(c.parent != 0)),
                        Value::Bool(c.kind == "c"),
                        attnums(&c.columns),
                        fk.map(|f| attnums(&f.ref_columns)).unwrap_or(Value::Null),
                        c.check.map(t).unwrap_or(Value::Null),
                    ]);
                }
                for (d, _) in catalog.user_types.values() {
                    for c in d.domain.iter().flat_map(|s| &s.checks) {
                        let blank = || t(" ");
                        rows.push(vec![
                            i8(c.oid as i64),
                            t(&c.name),
                            i8(d.namespace as i64),
                            t("c"),
                            Value::Bool(false),
                            Value::Bool(false),
                            Value::Bool(c.validated),
                            i8(0),
                            i8(0),
                            i8(0),
                            blank(),
                            blank(),
                            blank(),
                            i8(0),
                            i8(d.oid as i64),
                            Value::Bool(true),
                            Value::Int4(0),
                            Value::Bool(false),
                            Value::Null,
                            Value::Null,
                            t(&c.expr),
                        ]);
                    }
                }
            }
            InfoTableConstraints => {
                for c in constraints(catalog).into_iter().filter(|c| c.check.is_none()) {
                    let kind = match c.kind {
                        "p" => "PRIMARY KEY",
                        "u" => "UNIQUE",
                        _ => "FOREIGN KEY",
                    };
                    let mut row = info_constraint_row(catalog, &c.name, c.table, kind);
                    row[7] = yes_no(c.deferral.is_some());
                    row[8] = yes_no(c.deferral == Some(true));
                    rows.push(row);
                }
                // PostgreSQL lists each NOT NULL column as a CHECK constraint.
                for tb in catalog.tables.values() {
                    for (i, col) in tb.columns.iter().enumerate() {
                        if !col.nullable {
                            let name = format!("{}_{}_{}_not_null", tb.namespace, tb.oid, i + 1);
                            rows.push(info_constraint_row(catalog, &name, tb, "CHECK"));
                        }
                    }
                    for ch in &tb.checks {
                        rows.push(info_constraint_row(catalog, &ch.name, tb, "CHECK"));
                    }
                }
            }
            InfoKeyColumnUsage => {
                for c in constraints(catalog).into_iter().filter(|c| c.check.is_none()) {
                    for (pos, &col) in c.columns.iter().enumerate() {
                        let in_unique = c.fk.and_then(|f| {
                            let parent = catalog.table_by_oid(f.ref_table)?;
                            let (_, key) = crate::fk::target(&parent, f).ok()?;
                            let r = f.ref_columns[pos];
                            key.iter().position(|&k| k == r).map(|p| Value::Int4(p as i32 + 1))
                        });
                        let schema = schema_of(catalog, c.table.namespace);
                        let mut row = info_names(schema, &c.name);
                        row.extend(info_names(schema, &c.table.name));
                        row.push(t(&c.table.columns[col].name));
                        row.push(Value::Int4(pos as i32 + 1));
                        row.push(in_unique.unwrap_or(Value::Null));
                        rows.push(row);
                    }
                }
            }
            InfoReferentialConstraints => {
                for c in constraints(catalog).into_iter().filter(|c| c.check.is_none()) {
                    let Some(f) = c.fk else { continue };
                    let unique = catalog.table_by_oid(f.ref_table).and_then(|p| {
                        let ns = schema_of(catalog, p.namespace);
                        match crate::fk::target(&p, f).ok()?.0 {
                            crate::fk::Target::Primary => Some((ns, p.pkey_name.clone()?)),
                            crate::fk::Target::Unique(i) => Some((ns, p.indexes[i].name.clone())),
                        }
                    });
                    let mut row = info_names(schema_of(catalog, c.table.namespace), &c.name);
                    row.extend(
                        unique
                            .map(|(ns, u)| info_names(ns, &u))
                            .unwrap_or_else(|| vec![Value::Null, Value::Null, Value::Null]),
                    );
                    row.push(t(if f.match_full { "FULL" } else { "NONE" }));
                    row.push(t(f.on_update.sql()));
                    row.push(t(f.on_delete.sql()));
                    rows.push(row);
                }
            }
            InfoConstraintColumnUsage => {
                for c in constraints(catalog) {
                    // A foreign key uses the referenced table's columns.
                    let (table, cols) = match c.fk {
                        Some(f) => match catalog.table_by_oid(f.ref_table) {
                            Some(p) => (p, f.ref_columns.clone()),
                            None => continue,
                        },
                        None => (c.table.clone(), c.columns.clone()),
                    };
                    for col in cols {
                        let mut row = info_names(schema_of(catalog, table.namespace), &table.name);
                        row.push(t(&table.columns[col].name));
                        row.extend(info_names(schema_of(catalog, c.table.namespace), &c.name));
                        rows.push(row);
                    }
                }
            }
        }
        rows
    }
}

/// The I/O functions of an enum type: enum_in, enum_out, enum_recv,
/// enum_send (typmodin, typmodout, typanalyze and typsubscript none).
const ENUM_IO: [u32; 8] = [3506, 3507, 3532, 3533, 0, 0, 0, 0];

/// Every array type's I/O functions are the same: text[]'s.
const TEXT_ARRAY_OID: u32 = 1009;

/// The built-in type whose I/O functions, alignment and storage `ty` has:
/// itself, record or record[] for a composite type or its array, or
/// text[] for an array of an enum.
fn io_type_oid(ty: &DataType) -> u32 {
    match ty {
        DataType::Array(e) if matches!(**e, DataType::Record(_)) => RECORD_ARRAY_OID,
        DataType::Array(e) if e.is_user_defined() => TEXT_ARRAY_OID,
        DataType::Record(_) => RECORD_OID,
        other => other.oid(),
    }
}

/// record (2249) and record[] (2287): a composite type's and its array's
/// I/O functions, alignment and storage are theirs.
const RECORD_OID: u32 = 2249;
const RECORD_ARRAY_OID: u32 = 2287;

/// pg_collation's rows: OID, name, provider (Strata compares text by its
/// bytes, which is what all three mean in a C-locale database).
const COLLATIONS: &[(u32, &str, &str)] =
    &[(100, "default", "d"), (950, "C", "c"), (951, "POSIX", "c")];

/// The pg_collation OID of the collation `name` (case aside, as Strata
/// reads `COLLATE c` too), if Strata has it.
pub(crate) fn collation_oid(name: &str) -> Option<u32> {
    COLLATIONS.iter().find(|c| c.1.eq_ignore_ascii_case(name)).map(|c| c.0)
}

/// The name of the collation with pg_collation OID `oid`.
pub(crate) fn collation_name(oid: u32) -> Option<&'static str> {
    COLLATIONS.iter().find(|c| c.0 == oid).map(|c| c.1)
}

/// The attributes of `t`'s indexes (its primary key's first), by index
/// OID: each key as a column of the type the index stores (a gin index's
/// operator class's, for jsonb and arrays), named after its column, or
/// its expression as CREATE INDEX names an index after it (`lower`,
/// `expr`), made unique with a number; then the INCLUDE columns.
fn index_attributes(t: &TableDef) -> Vec<(u32, Vec<ColumnDef>)> {
    let mut out = Vec::new();
    if t.pkey_name.is_some() {
        let columns = t.primary_key.iter().map(|&c| ColumnDef {
            nullable: true,
            default: None,
            identity: None,
            generated: false,
            comment: None,
            ..t.columns[c].clone()
        });
        out.push((t.pkey_oid, columns.collect()));
    }
    for idx in &t.indexes {
        let types = idx.key_types(t);
        let mut exprs = idx.exprs.iter();
        let mut columns: Vec<ColumnDef> = Vec::new();
        for (k, &c) in idx.columns.iter().chain(&idx.include).enumerate() {
            let (name, ty) = match c {
                crate::catalog::EXPRESSION_KEY => {
                    let e = exprs.next().and_then(|e| crate::parse::expr_text(e).ok());
                    let name = match e.as_ref().map(crate::select::derive_name) {
                        Some(n) if n != "?column?" => n,
                        _ => "expr".to_string(),
                    };
                    let ty = types.get(k).cloned().unwrap_or(DataType::Text);
                    (name, crate::catalog::TypeDef::from_type(&ty))
                }
                c => (t.columns[c].name.clone(), t.columns[c].ty.clone()),
            };
            // gin keeps a jsonb's keys and values as text (jsonb_ops) or
            // hashes (jsonb_path_ops), an array's elements as themselves;
            // hash keeps hashes.
            let stored = match (idx.method.as_deref(), ty.to_type()) {
                (Some("hash"), _) => Some(DataType::Int4),
                (Some("gin"), DataType::Jsonb) => match idx.opclasses.get(k) {
                    Some(Some(_)) => Some(DataType::Int4),
                    _ => Some(DataType::Text),
                },
                (Some("gin"), DataType::Array(e)) => Some(*e),
                _ => None,
            };
            let ty = stored.map_or(ty, |s| crate::catalog::TypeDef::from_type(&s));
            let mut unique = name.clone();
            let mut n = 0;
            while columns.iter().any(|c| c.name == unique) {
                n += 1;
                unique = format!("{name}{n}");
            }
            let collation = t.columns.get(c).and_then(|c| c.collation);
            columns.push(ColumnDef { collation, ..ColumnDef::new(unique, ty) });
        }
        out.push((idx.oid, columns));
    }
    out
}

/// The collation a value of type `ty` (or of its elements) has: `default`
/// for the collatable string types, `C` for name, none (0) otherwise.
pub(crate) fn collation(ty: &DataType) -> i64 {
    match ty.elem().unwrap_or(ty) {
        DataType::Text | DataType::Varchar(_) | DataType::Char(_) => 100,
        DataType::Name => 950,
        _ => 0,
    }
}

/// One pg_type row.
fn pg_type_row(ty: &DataType, namespace: u32) -> Vec<Value> {
    let t = |s: &str| Value::Text(s.to_string());
    let i8 = |x: i64| Value::Oid(x as u32);
    let (category, preferred, array) = type_traits(ty);
    let typtype = match ty {
        DataType::Record(r) if r.named.is_some() => "c",
        DataType::Unknown | DataType::Record(_) | DataType::Void => "p",
        DataType::Array(e) if matches!(&**e, DataType::Record(r) if r.named.is_none()) => "p",
        DataType::Enum(_) => "e",
        DataType::Range(_) => "r",
        _ => "b",
    };
    let mut row = vec![
        i8(ty.oid() as i64),
        t(&ty.name()),
        i8(namespace as i64),
        i8(10),
        Value::Int2(ty.typlen()),
        Value::Bool(ty.typlen() > 0),
        t(typtype),
        t(&category),
        Value::Bool(preferred),
        Value::Bool(true),
        t(","),
        i8(0),
        i8(ty.elem().map(|e| e.oid() as i64).unwrap_or(0)),
        i8(array),
        Value::Bool(false),
        i8(0),
        Value::Int4(-1),
        Value::Int4(0),
        i8(collation(ty)),
        Value::Null,
    ];
    let io_oid = io_type_oid(ty);
    let funcs = match ty {
        DataType::Enum(_) => ENUM_IO,
        _ => crate::builtins::type_io(io_oid).map(|io| io.funcs).unwrap_or_default(),
    };
    // typsubscript comes first in PostgreSQL's order.
    row.push(builtin_rows::regproc(funcs[7]));
    row.extend(funcs[..7].iter().map(|&f| builtin_rows::regproc(f)));
    let (align, storage) = crate::builtins::align_storage(io_oid);
    row.extend([t(align), t(storage)]);
    row.extend([Value::Null, Value::Null]);
    row
}

/// A domain's pg_type row and its array type's: its values' type's row
/// with the domain's name, OIDs, base type, NOT NULL, default and
/// domain_in/domain_recv as input functions.
fn domain_type_rows(d: &crate::catalog::Domain) -> [Vec<Value>; 2] {
    let spec = d.spec();
    let mut row = pg_type_row(&d.ty, d.def.namespace);
    let text = |s: &str| Value::Text(s.to_string());
    row[0] = Value::Oid(d.def.oid);
    row[1] = text(&d.def.name);
    row[6] = text("d");
    row[13] = Value::Oid(d.def.array_oid);
    row[14] = Value::Bool(spec.not_null);
    row[15] = Value::Oid(spec.base.oid);
    row[16] = Value::Int4(spec.base.typmod);
    row[19] = spec.default.as_deref().map_or(Value::Null, text);
    row[21] = builtin_rows::regproc(DOMAIN_IN);
    row[23] = builtin_rows::regproc(DOMAIN_RECV);
    // typdefaultbin: what pg_get_expr shows of it, the default's text.
    row[30] = row[19].clone();
    let mut array = pg_type_row(&d.ty.array_of(), d.def.namespace);
    array[0] = Value::Oid(d.def.array_oid);
    array[1] = text(&format!("_{}", d.def.name));
    array[12] = Value::Oid(d.def.oid);
    [row, array]
}

/// domain_in and domain_recv, a domain's input functions.
const DOMAIN_IN: u32 = 2597;
const DOMAIN_RECV: u32 = 2598;

/// pg_type's typcategory, typispreferred and typarray for `ty`.
fn type_traits(ty: &DataType) -> (String, bool, i64) {
    // PostgreSQL's own categories for the built-in types.
    let (category, preferred) = match (ty, crate::builtins::pgcat::pgcat().type_info(ty.oid())) {
        (DataType::Enum(_), _) => (b'E', false),
        (DataType::Record(r), _) if r.named.is_some() => (b'C', false),
        (DataType::Array(_), None) => (b'A', false),
        (_, Some(info)) => (info.category, info.preferred),
        (_, None) => (b'U', false),
    };
    let array = match ty {
        DataType::Array(_) => 0,
        t if t.is_user_defined() => t.array_of().oid(),
        other => sqltypes::array::array_oid(other.oid()).unwrap_or(0),
    };
    ((category as char).to_string(), preferred, array as i64)
}

/// The relations with columns, tables then views: OID, namespace, name and
/// columns.
fn relation_columns(cat: &Catalog) -> Vec<(u32, u32, &str, Cow<'_, [ColumnDef]>)> {
    let tables = cat
        .tables
        .values()
        .map(|t| (t.oid, t.namespace, t.name.as_str(), Cow::Borrowed(t.columns.as_slice())));
    let views = cat
        .views
        .values()
        .map(|v| (v.oid, v.namespace, v.name.as_str(), Cow::Owned(cat.view_columns(v))));
    tables.chain(views).collect()
}

/// pg_description's rows for the built-in functions, built once.
fn builtin_descriptions() -> &'static [Vec<Value>] {
    static ROWS: std::sync::OnceLock<Vec<Vec<Value>>> = std::sync::OnceLock::new();
    ROWS.get_or_init(|| {
        let row = |oid: u32, d: &String| {
            vec![
                Value::Int8(i64::from(oid)),
                Value::Int8(PG_PROC_OID),
                Value::Int4(0),
                Value::Text(d.clone()),
            ]
        };
        crate::builtins::procs()
            .iter()
            .filter_map(|p| Some(row(p.oid, p.description.as_ref()?)))
            .collect()
    })
}

fn yes_no(b: bool) -> Value {
    Value::Text(if b { "YES" } else { "NO" }.into())
}

/// True if INSERT and UPDATE can write through view `v` without
/// triggers: it is automatically updatable, with a column that is its
/// table's (information_schema's is_updatable and is_insertable_into).
fn view_updatable(cat: &Catalog, v: &std::sync::Arc<crate::catalog::ViewDef>) -> bool {
    crate::planner::views::auto_updatable(cat, v).is_some_and(|c| c.contains(&true))
}

/// The SQL-standard type name information_schema.columns.data_type shows
/// (no length or precision: those are separate columns).
/// information_schema's data_type of a column or domain of type `ty`
/// (of domain `domain`): a domain's is its base type's, or USER-DEFINED
/// when that is a domain too.
fn info_type_name(domain: Option<&crate::catalog::Domain>, ty: &DataType) -> &'static str {
    match domain {
        Some(d) if d.base.is_some() => "USER-DEFINED",
        _ => sql_type_name(ty),
    }
}

/// information_schema's udt_schema of type `ty`: an enum's schema, else
/// pg_catalog.
fn udt_schema<'a>(catalog: &'a Catalog, ty: &DataType) -> &'a str {
    match ty.elem().unwrap_or(ty) {
        t if t.is_user_defined() => {
            catalog.user_type(t.oid()).map(|d| schema_of(catalog, d.namespace)).unwrap_or("public")
        }
        _ => "pg_catalog",
    }
}

fn sql_type_name(ty: &DataType) -> &'static str {
    match ty {
        DataType::Bool => "boolean",
        DataType::Int2 => "smallint",
        DataType::Int4 => "integer",
        DataType::Int8 => "bigint",
        DataType::Float4 => "real",
        DataType::Float8 => "double precision",
        DataType::Numeric(_) => "numeric",
        DataType::Text => "text",
        DataType::Varchar(_) => "character varying",
        DataType::Char(_) => "character",
        DataType::Timestamp => "timestamp without time zone",
        DataType::TimestampTz => "timestamp with time zone",
        DataType::Date => "date",
        DataType::Bytea => "bytea",
        DataType::QChar => "\"char\"",
        DataType::Unknown => "unknown",
        DataType::Void => "void",
        DataType::Refcursor => "refcursor",
        DataType::Name => "name",
        DataType::Array(_) => "ARRAY",
        DataType::Oid => "oid",
        DataType::Reg(_) => ty.typname(),
        DataType::Int2Vector => "int2vector",
        DataType::OidVector => "oidvector",
        DataType::Time => "time without time zone",
        DataType::TimeTz => "time with time zone",
        DataType::Interval => "interval",
        DataType::Uuid => "uuid",
        DataType::Inet => "inet",
        DataType::Cidr => "cidr",
        DataType::Json => "json",
        DataType::Jsonb => "jsonb",
        DataType::Enum(_) => "USER-DEFINED",
        DataType::Record(r) if r.named.is_some() => "USER-DEFINED",
        DataType::Record(_) => "record",
        DataType::Range(k) => k.name(),
    }
}

/// The type-facet columns information_schema.columns and domains share,
/// which [`type_facets`] fills.
const TYPE_FACET_COLUMNS: [(&str, DataType); 6] = [
    ("character_maximum_length", DataType::Int4),
    ("character_octet_length", DataType::Int4),
    ("numeric_precision", DataType::Int4),
    ("numeric_precision_radix", DataType::Int4),
    ("numeric_scale", DataType::Int4),
    ("datetime_precision", DataType::Int4),
];

/// information_schema.columns' character_maximum_length,
/// character_octet_length, numeric_precision, numeric_precision_radix,
/// numeric_scale and datetime_precision for `ty` (of `time_precision`
/// fractional digits, when given).
fn type_facets(ty: &DataType, time_precision: Option<u8>) -> [Value; 6] {
    let i = |v: i32| Value::Int4(v);
    let n = Value::Null;
    // UTF-8 needs up to 4 bytes a character; unbounded text is capped at 1 GB.
    let (chars, octets) = match ty {
        DataType::Varchar(Some(len)) | DataType::Char(len) if *len > 0 => {
            (i(*len as i32), i(*len as i32 * 4))
        }
        DataType::Varchar(None) | DataType::Text => (n.clone(), i(1 << 30)),
        _ => (n.clone(), n.clone()),
    };
    let (precision, radix, scale) = match ty {
        DataType::Int2 => (i(16), i(2), i(0)),
        DataType::Int4 => (i(32), i(2), i(0)),
        DataType::Int8 => (i(64), i(2), i(0)),
        DataType::Float8 => (i(53), i(2), n.clone()),
        DataType::Float4 => (i(24), i(2), n.clone()),
        DataType::Numeric(Some((p, s))) => (i(*p as i32), i(10), i(*s as i32)),
        DataType::Numeric(None) => (n.clone(), i(10), n.clone()),
        _ => (n.clone(), n.clone(), n.clone()),
    };
    let datetime = match ty {
        DataType::Date => i(0),
        DataType::Timestamp
        | DataType::TimestampTz
        | DataType::Time
        | DataType::TimeTz
        | DataType::Interval => i(time_precision.map_or(6, i32::from)),
        _ => n,
    };
    [chars, octets, precision, radix, scale, datetime]
}

/// A primary key, unique or foreign key constraint, as the catalog views
/// show it.
struct Constraint<'a> {
    oid: u32,
    name: String,
    /// pg_constraint.contype: p, u or f.
    kind: &'static str,
    table: &'a std::sync::Arc<TableDef>,
    columns: Vec<usize>,
    /// The index enforcing it (for a foreign key: the referenced one).
    index_oid: u32,
    fk: Option<&'a ForeignKeyDef>,
    /// A CHECK constraint's condition.
    check: Option<&'a str>,
    /// Some(initially deferred) when DEFERRABLE.
    deferral: Option<bool>,
    /// False when added NOT VALID and not validated since.
    validated: bool,
    /// On a partition: the partitioned table's constraint this one is
    /// attached to (conparentid), else 0.
    parent: u32,
}

/// Every key constraint in `catalog`, table by table.
/// Column positions as an int2[] of attribute numbers (NULL when empty).
fn attnums(columns: &[usize]) -> Value {
    if columns.is_empty() {
        return Value::Null;
    }
    let items = columns.iter().map(|&c| Value::Int2(c as i16 + 1)).collect();
    sqltypes::array::ArrayValue::new(DataType::Int2, items).into_value()
}

fn constraints(catalog: &Catalog) -> Vec<Constraint<'_>> {
    let mut out = Vec::new();
    for tb in catalog.tables.values() {
        if let Some(pk) = &tb.pkey_name {
            out.push(Constraint {
                oid: tb.pkey_oid,
                name: pk.clone(),
                kind: "p",
                table: tb,
                columns: tb.primary_key.clone(),
                index_oid: tb.pkey_oid,
                fk: None,
                check: None,
                deferral: tb.pkey_deferral,
                validated: true,
                parent: tb.pkey_parent.unwrap_or(0),
            });
        }
        for idx in tb.indexes.iter().filter(|i| i.constraint) {
            out.push(Constraint {
                oid: idx.oid,
                name: idx.name.clone(),
                kind: "u",
                table: tb,
                columns: idx.columns.clone(),
                index_oid: idx.oid,
                fk: None,
                check: None,
                deferral: idx.deferral,
                validated: true,
                parent: idx.parent.unwrap_or(0),
            });
        }
        for f in &tb.foreign_keys {
            let index_oid = catalog
                .table_by_oid(f.ref_table)
                .and_then(|p| match crate::fk::target(&p, f).ok()?.0 {
                    crate::fk::Target::Primary => Some(p.pkey_oid),
                    crate::fk::Target::Unique(i) => Some(p.indexes[i].oid),
                })
                .unwrap_or(0);
            out.push(Constraint {
                oid: f.oid,
                name: f.name.clone(),
                kind: "f",
                table: tb,
                columns: f.columns.clone(),
                index_oid,
                fk: Some(f),
                check: None,
                deferral: f.deferral(),
                validated: !f.not_valid,
                parent: f.parent.unwrap_or(0),
            });
        }
        for (k, ch) in tb.checks.iter().enumerate() {
            // conkey: the columns the condition reads, in the order they
            // first appear.
            let columns = tb.bound_checks.get(k).map(|e| e.columns_read()).unwrap_or_default();
            out.push(Constraint {
                oid: ch.oid(tb.oid),
                name: ch.name.clone(),
                kind: "c",
                table: tb,
                columns,
                index_oid: 0,
                fk: None,
                check: Some(&ch.expr),
                deferral: None,
                validated: !ch.not_valid,
                parent: 0,
            });
        }
    }
    out
}

/// (catalog, schema, name) of an object.
fn info_names(schema: &str, name: &str) -> Vec<Value> {
    vec![Value::Text("postgres".into()), Value::Text(schema.into()), Value::Text(name.into())]
}

/// The name of schema `ns` (`???` for one that does not exist).
fn schema_of(catalog: &Catalog, ns: u32) -> &str {
    catalog.namespace_name(ns).unwrap_or("???")
}

fn info_constraint_row(catalog: &Catalog, name: &str, table: &TableDef, kind: &str) -> Vec<Value> {
    let schema = schema_of(catalog, table.namespace);
    let mut row = info_names(schema, name);
    row.extend(info_names(schema, &table.name));
    for v in [kind, "NO", "NO", "YES"] {
        row.push(Value::Text(v.into()));
    }
    row
}

/// The OID of role `name` (the bootstrap superuser's for a role that is
/// gone).
pub fn role_oid(catalog: &Catalog, name: &str) -> u32 {
    role_oid_among(&roles_with_oids(catalog), name)
}

/// [`role_oid`] among roles already listed with [`roles_with_oids`] (the
/// predefined roles included).
pub fn role_oid_among(roles: &[(i64, crate::catalog::RoleDef)], name: &str) -> u32 {
    if let Some((_, oid)) = PREDEFINED_ROLES.iter().find(|(n, _)| *n == name) {
        return *oid;
    }
    roles.iter().find(|(_, r)| r.name == name).map_or(10, |(oid, _)| *oid as u32)
}

/// Every role with the OID it is shown with: 10 for the bootstrap
/// superuser, others numbered from 16384 in name order (roles have no
/// stored OID yet).
pub fn roles_with_oids(catalog: &Catalog) -> Vec<(i64, crate::catalog::RoleDef)> {
    let roles = catalog.all_roles().into_iter().enumerate();
    roles.map(|(i, r)| (if r.name == "postgres" { 10 } else { 16384 + i as i64 }, r)).collect()
}

/// A pg_index row: an index on `columns` of `tb`.
fn index_row(
    tb: &TableDef,
    oid: u32,
    (columns, types): (&[usize], &[DataType]),
    (unique, primary, valid): (bool, bool, bool),
    idx: Option<&crate::catalog::IndexDef>,
) -> Vec<Value> {
    let n = columns.len() as i16;
    let int2s = |f: &dyn Fn(usize) -> i16| {
        sqltypes::array::vector(
            DataType::Int2,
            (0..columns.len()).map(|i| Value::Int2(f(i))).collect(),
        )
    };
    let oids = |f: &dyn Fn(usize) -> u32| {
        sqltypes::array::vector(
            DataType::Oid,
            (0..columns.len()).map(|i| Value::Oid(f(i))).collect(),
        )
    };
    let ty = |i: usize| types[i].clone();
    let collation = |i: usize| collation(&ty(i)) as u32;
    let include = idx.map_or(&[][..], |i| &i.include[..]);
    let mut row = vec![
        Value::Int8(oid as i64),
        Value::Int8(tb.oid as i64),
        Value::Bool(unique),
        Value::Bool(primary),
        Value::Int2(n + include.len() as i16),
        Value::Int2(n),
    ];
    // indisexclusion, indimmediate, indisclustered, indisvalid, indisready,
    // indislive, indisreplident, indnullsnotdistinct
    let immediate = match primary {
        true => tb.pkey_deferral.is_none(),
        false => idx.is_none_or(|i| i.deferral.is_none()),
    };
    for b in [false, immediate, false, valid, true, true, false, false] {
        row.push(Value::Bool(b));
    }
    // indkey: 0 for an expression key, as in PostgreSQL; then the INCLUDE
    // columns.
    let keys = columns.iter().chain(include).map(|&c| match c {
        crate::catalog::EXPRESSION_KEY => Value::Int2(0),
        c => Value::Int2(c as i16 + 1),
    });
    row.push(sqltypes::array::vector(DataType::Int2, keys.collect()));
    row.push(oids(&collation));
    let method = idx.and_then(|i| i.method.as_deref());
    row.push(oids(&|i| default_opclass(method, &ty(i))));
    row.push(int2s(&|i| idx.and_then(|x| x.options.get(i).copied()).unwrap_or(0)));
    // indexprs and indpred hold SQL text where PostgreSQL has node trees;
    // pg_get_expr prints them.
    // (An expression other than a call, and a condition other than a
    // column, print parenthesized, as PostgreSQL's deparser prints them.)
    let paren = |e: &String| match crate::func::catalog_info::looks_like_call(e) {
        true => e.clone(),
        false => format!("({e})"),
    };
    let exprs = idx.filter(|i| !i.exprs.is_empty()).map(|i| {
        let shown: Vec<String> = i.exprs.iter().map(paren).collect();
        Value::Text(shown.join(", "))
    });
    row.push(exprs.unwrap_or(Value::Null));
    let bare = |p: &String| p.chars().all(|c| c.is_alphanumeric() || c == '_');
    let pred =
        idx.and_then(|i| i.predicate.as_ref()).map(|p| if bare(p) { p.clone() } else { paren(p) });
    row.push(pred.map_or(Value::Null, Value::Text));
    row
}

/// The default operator classes: (OID, access method OID, name, input
/// type OID): btree's, and the range types' of every method.
const OPCLASSES: &[(u32, u32, &str, u32)] = &[
    (397, 403, "array_ops", 2277),
    (424, 403, "bool_ops", 16),
    (426, 403, "bpchar_ops", 1042),
    (428, 403, "bytea_ops", 17),
    (429, 403, "char_ops", 18),
    (434, 403, "date_ops", 1082),
    (1971, 403, "float8_ops", 701),
    (1978, 403, "int4_ops", 23),
    (1979, 403, "int2_ops", 21),
    (1980, 403, "int8_ops", 20),
    (1981, 403, "oid_ops", 26),
    (3125, 403, "numeric_ops", 1700),
    (3126, 403, "text_ops", 25),
    (3127, 403, "timestamptz_ops", 1184),
    (3128, 403, "timestamp_ops", 1114),
    (10076, 403, "range_ops", 3831),
    (10077, 405, "range_ops", 3831),
    (10078, 783, "range_ops", 3831),
    (10079, 4000, "range_ops", 3831),
    (10159, 3580, "range_inclusion_ops", 3831),
];

/// The OID of a type's default operator class (pg_opclass) for an index
/// of `method` (None: btree); 0 for the classes not modelled.
pub fn default_opclass(method: Option<&str>, ty: &DataType) -> u32 {
    let am = crate::ddl::access_methods::method_oid(method);
    // The input type the class is declared for: varchar uses text's,
    // the OID alias types oid's, every array type anyarray's (2277), every
    // range type anyrange's (3831).
    let intype = match ty {
        DataType::Varchar(_) => 25,
        DataType::Reg(_) => 26,
        DataType::Array(_) | DataType::Int2Vector | DataType::OidVector => 2277,
        DataType::Range(_) => 3831,
        other => other.oid(),
    };
    let class = OPCLASSES.iter().find(|&&(_, m, _, t)| m == am && t == intype);
    class.map_or(0, |&(oid, ..)| oid)
}

fn class_row(
    oid: u32,
    namespace: u32,
    name: &str,
    kind: &str,
    has_index: bool,
    persistence: &str,
) -> Vec<Value> {
    // Tables use the heap access method and indexes btree (pg_am).
    let am = match kind {
        "r" | "m" => 2,
        "i" | "I" => 403,
        _ => 0,
    };
    vec![
        Value::Int8(oid as i64),
        Value::Text(name.to_string()),
        Value::Int8(namespace as i64),
        Value::Text(kind.to_string()),
        Value::Int8(10),
        Value::Int8(am),
        Value::Float8(-1.0),
        Value::Bool(has_index),
        Value::Text(persistence.to_string()),
        Value::Bool(false),
        Value::Int2(0),
        Value::Int2(0),
        Value::Bool(false),
        Value::Bool(false),
        Value::Bool(false),
        Value::Bool(false),
        Value::Bool(false),
        Value::Bool(false),
        Value::Int8(0),
        Value::Int8(0),
        Value::Int8(0),
        Value::Int8(0),
        Value::Int8(oid as i64),
        Value::Text("d".into()),
        Value::Int4(0),
        Value::Int4(0),
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Bool(true),
        Value::Int8(0),
        Value::Int8(0),
        Value::Int8(0),
    ]
}

/// Fills in pg_sequences.last_value, which lives in storage rather than in
/// the catalog: each sequence's stored position if a value was taken, else
/// NULL, as PostgreSQL's pg_sequence_last_value. `rows` are
/// [`SystemTable::PgSequences`]'s, in the catalog's order.
pub async fn fill_sequence_positions<T: kvapi::Txn>(
    rows: &mut [Vec<Value>],
    catalog: &Catalog,
    txn: &T,
    tenant: kvapi::TenantId,
) -> crate::error::Result<()> {
    for (row, sq) in rows.iter_mut().zip(catalog.sequences.values()) {
        if let Some((last, true)) = crate::sequence::stored_position(txn, tenant, sq.oid).await? {
            if let Some(v) = row.last_mut() {
                *v = Value::Int8(last);
            }
        }
    }
    Ok(())
}
