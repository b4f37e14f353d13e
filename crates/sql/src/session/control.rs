//! Statements that act on the session rather than on data: BEGIN,
//! COMMIT, ROLLBACK (and savepoints), SET, RESET and SHOW.

use super::*;

impl<K: KvClient> Session<K> {
    /// Ends the transaction: commits it (its SET LOCALs end, and a
    /// failed commit reports its error), or rolls it back.
    pub(super) async fn end_txn(&mut self, commit: bool) -> Result<()> {
        if commit {
            let committed = self.commit_txn().await;
            self.end_txn_settings(committed.is_ok());
            return committed;
        }
        if let Some(t) = self.txn.take() {
            t.abort();
        }
        self.reset_txn_info();
        Ok(())
    }

    /// Transaction control and session commands that do not need a
    /// transaction. Returns None for other statements.
    pub(super) async fn control(&mut self, stmt: &ast::Statement) -> Result<Option<Outcome>> {
        if matches!(stmt, ast::Statement::Set(_) | ast::Statement::Reset(_)) {
            self.settings_generation += 1;
        }
        use ast::Statement as S;
        Ok(Some(match stmt {
            S::StartTransaction { modes, begin, .. } => {
                if self.state == TxnState::Block {
                    self.notices.push(ErrorReport::warning(
                        sqlstate::SqlState::ActiveSqlTransaction,
                        "there is already a transaction in progress",
                    ));
                } else {
                    let (iso, read_only) = txn_modes(modes)?;
                    self.block_isolation = iso;
                    self.block_read_only = read_only;
                    if self.txn.is_some() && self.block_isolation.is_some() {
                        // An implicit transaction already took its snapshot.
                        self.block_isolation = None;
                    }
                    self.state = TxnState::Block;
                }
                // PostgreSQL's tag names the spelling used.
                Outcome::Command(if *begin { "BEGIN" } else { "START TRANSACTION" }.into())
            }
            S::Commit { .. } => {
                let tag = match self.state {
                    TxnState::Failed => {
                        self.savepoints.clear();
                        self.fail_txn();
                        self.state = TxnState::Idle;
                        self.block_isolation = None;
                        self.block_read_only = None;
                        "ROLLBACK"
                    }
                    TxnState::Block => {
                        self.state = TxnState::Idle;
                        self.block_isolation = None;
                        self.block_read_only = None;
                        self.end_txn(true).await?;
                        "COMMIT"
                    }
                    _ => {
                        self.notices.push(ErrorReport::warning(
                            sqlstate::SqlState::NoActiveSqlTransaction,
                            "there is no transaction in progress",
                        ));
                        "COMMIT"
                    }
                };
                Outcome::Command(tag.into())
            }
            S::Rollback { savepoint: None, .. } => {
                if !matches!(self.state, TxnState::Block | TxnState::Failed) {
                    self.notices.push(ErrorReport::warning(
                        sqlstate::SqlState::NoActiveSqlTransaction,
                        "there is no transaction in progress",
                    ));
                }
                self.end_txn(false).await?;
                self.state = TxnState::Idle;
                self.block_isolation = None;
                self.block_read_only = None;
                Outcome::Command("ROLLBACK".into())
            }
            S::Savepoint { name } => self.savepoint(crate::bind::ident(name)).await?,
            S::ReleaseSavepoint { name } => self.release_savepoint(&crate::bind::ident(name))?,
            S::Rollback { savepoint: Some(name), .. } => {
                self.rollback_to_savepoint(&crate::bind::ident(name)).await?
            }
            S::Set(set) => self.set(set)?,
            S::ShowVariable { variable } => {
                let name = crate::settings::shown_name(variable);
                let v = match name.as_str() {
                    "transaction isolation level" | "transaction_isolation" => {
                        iso_name(self.isolation()?).to_string()
                    }
                    "transaction_read_only" => on_off(self.read_only()).to_string(),
                    "all" => {
                        // name, setting, description (Strata keeps none).
                        let rows = self
                            .settings
                            .all()
                            .map(|(k, v)| {
                                let name = Value::Text(Settings::canonical(k));
                                vec![name, Value::Text(v.clone()), Value::Text(String::new())]
                            })
                            .collect();
                        return Ok(Some(Outcome::Rows(rows, "SHOW".into())));
                    }
                    n => self.settings.get(n)?,
                };
                Outcome::Rows(vec![vec![Value::Text(v)]], "SHOW".into())
            }
            S::Reset(r) => {
                self.settings_changing();
                match &r.reset {
                    // Who the session is survives RESET ALL, as in
                    // PostgreSQL.
                    ast::Reset::ALL => {
                        let kept: Vec<(&str, String)> = IDENTITY_SETTINGS
                            .iter()
                            .filter_map(|&n| Some((n, self.settings.value(n)?.to_string())))
                            .collect();
                        self.settings = Settings::default();
                        for (n, v) in kept {
                            self.settings.set(n, &v)?;
                        }
                    }
                    ast::Reset::ConfigurationParameter(n)
                        if IDENTITY_SETTINGS
                            .contains(&crate::settings::setting_name(n).as_str()) =>
                    {
                        // RESET is SET to the value the session began with.
                        let name = crate::settings::setting_name(n);
                        let value =
                            if name == "role" { "none".into() } else { self.user.to_string() };
                        self.set_setting(&name, &value, false, true)?;
                    }
                    ast::Reset::ConfigurationParameter(n) => {
                        let name = crate::settings::setting_name(n);
                        self.settings.reset(&name)?;
                        // Like a session-wide SET: what COMMIT keeps.
                        let value = self.settings.get(&name)?;
                        if let Some(e) = self.local_settings.iter_mut().find(|(n, _)| *n == name) {
                            e.1 = value;
                        }
                    }
                    ast::Reset::SessionAuthorization => {
                        let user = self.user.to_string();
                        self.set_session_authorization(&user, false)?;
                    }
                }
                self.report_superuser();
                Outcome::Command("RESET".into())
            }
            S::Discard { .. } => Outcome::Command("DISCARD ALL".into()),
            _ => return Ok(None),
        }))
    }

    /// Changes a setting for the session or, with `local`, until the
    /// transaction block ends (outside one, SET LOCAL warns and does
    /// nothing, and set_config(..., true) lasts only its statement; in a
    /// function a statement calls, SET LOCAL lasts until the statement's
    /// transaction ends).
    pub(super) fn change_setting(
        &mut self,
        name: &str,
        value: &str,
        local: bool,
        statement: bool,
    ) -> Result<()> {
        let name = name.to_lowercase();
        let in_statement = self.state == TxnState::Implicit && self.pl_depth > 0;
        if local && !matches!(self.state, TxnState::Block) && !in_statement {
            if statement {
                self.notices.push(ErrorReport::warning(
                    sqlstate::SqlState::NoActiveSqlTransaction,
                    "SET LOCAL can only be used in transaction blocks",
                ));
            } else if self.settings.get(&name).is_err() {
                // The custom setting exists from now on, empty.
                self.settings.set(&name, "")?;
            }
            return Ok(());
        }
        self.settings_changing();
        // A custom setting (`app.user`) first set here was empty before.
        let before = self.settings.get(&name).unwrap_or_default();
        self.settings.set(&name, value)?;
        let now = self.settings.get(&name).unwrap_or_default();
        if !local && self.apart_depth > 0 {
            self.plain_sets.push(name.clone());
        }
        match self.local_settings.iter_mut().find(|(n, _)| *n == name) {
            // A session-wide SET after SET LOCAL is what COMMIT keeps.
            Some(entry) if !local => entry.1 = now,
            Some(_) => {}
            None if local => self.local_settings.push((name, before)),
            None => {}
        }
        Ok(())
    }

    /// SET name = value from SQL or set_config(): the settings that say
    /// who the session is go through their own checks.
    pub(super) fn set_setting(
        &mut self,
        name: &str,
        value: &str,
        local: bool,
        statement: bool,
    ) -> Result<()> {
        match name.to_lowercase().as_str() {
            "role" => self.set_role(value, local),
            "session_authorization" => self.set_session_authorization(value, local),
            "is_superuser" => {
                bail!(CantChangeRuntimeParam, "parameter \"is_superuser\" cannot be changed")
            }
            _ => self.change_setting(name, value, local, statement),
        }
    }

    /// SET [LOCAL] ROLE: the current user becomes `role` (`none`: the
    /// session user again), which the session user must be a member of.
    fn set_role(&mut self, role: &str, local: bool) -> Result<()> {
        if role != "none" {
            if self.catalog.role(role).is_none() {
                bail!(UndefinedObject, "role \"{role}\" does not exist");
            }
            if !self.catalog.may_become(self.session_user(), role) {
                bail!(InsufficientPrivilege, "permission denied to set role \"{role}\"");
            }
        }
        self.change_setting("role", role, local, true)?;
        self.report_superuser();
        Ok(())
    }

    /// SET SESSION AUTHORIZATION: only a superuser who logged in may become
    /// another session user; the current role goes back to none.
    fn set_session_authorization(&mut self, user: &str, local: bool) -> Result<()> {
        if user != &*self.user && !self.catalog.is_superuser(&self.user) {
            bail!(InsufficientPrivilege, "permission denied to set session authorization");
        }
        if self.catalog.role(user).is_none() {
            bail!(UndefinedObject, "role \"{user}\" does not exist");
        }
        self.change_setting("session_authorization", user, local, true)?;
        self.change_setting("role", "none", local, true)?;
        self.report_superuser();
        Ok(())
    }

    /// is_superuser follows the current user.
    fn report_superuser(&mut self) {
        let on = self.catalog.is_superuser(self.current_user());
        if self.settings.value("is_superuser") != Some(if on { "on" } else { "off" }) {
            let _ = self.settings.set("is_superuser", if on { "on" } else { "off" });
        }
    }

    /// Remembers the settings before this transaction block's first change
    /// of one, for ROLLBACK.
    fn settings_changing(&mut self) {
        if matches!(self.state, TxnState::Block) && self.settings_before_txn.is_none() {
            self.settings_before_txn = Some(self.settings.clone());
        }
    }

    /// At the end of a transaction block: COMMIT returns the SET LOCAL
    /// settings to their values; a rollback returns every setting to what
    /// it was before the block changed it.
    pub(super) fn end_txn_settings(&mut self, committed: bool) {
        let before = self.settings_before_txn.take();
        let local = std::mem::take(&mut self.local_settings);
        let target: Vec<(String, String)> = match (committed, before) {
            (false, Some(b)) => b.all().map(|(k, v)| (k.clone(), v.clone())).collect(),
            // Commit, or the end of an implicit transaction (which keeps no
            // settings from before it).
            (_, _) => local,
        };
        for (name, value) in target {
            if self.settings.get(&name).ok().as_deref() != Some(value.as_str()) {
                // The value was accepted once; it is accepted again.
                let _ = self.settings.set(&name, &value);
                self.settings_generation += 1;
            }
        }
    }

    pub(super) fn set(&mut self, set: &ast::Set) -> Result<Outcome> {
        use ast::Set as S;
        match set {
            S::SingleAssignment { variable, values, scope, .. } => {
                let name = crate::settings::setting_name(variable);
                let value = crate::settings::assigned(&name, values).unwrap_or_else(|| {
                    crate::settings::default_value(&name).unwrap_or_default().to_string()
                });
                let local = *scope == Some(ast::ContextModifier::Local);
                if name == "transaction_isolation" || name == "default_transaction_isolation" {
                    let lvl = parse_isolation(&value)?;
                    if name == "transaction_isolation" {
                        self.block_isolation = Some(lvl);
                        return Ok(Outcome::Command("SET".into()));
                    }
                    self.change_setting(&name, iso_name(lvl), local, true)?;
                } else {
                    self.set_setting(&name, &value, local, true)?;
                }
            }
            S::SetTimeZone { value, local } => {
                let zone = match value {
                    ast::Expr::Interval(iv) => interval_zone(value, iv)?,
                    other => match crate::settings::value_text(other) {
                        v if v.eq_ignore_ascii_case("local")
                            || v.eq_ignore_ascii_case("default") =>
                        {
                            crate::settings::default_value("timezone").unwrap_or("UTC").to_string()
                        }
                        v => v,
                    },
                };
                self.change_setting("timezone", &zone, *local, true)?
            }
            S::SetTransaction { modes, session, .. } => {
                let (iso, read_only) = txn_modes(modes)?;
                if let Some(r) = read_only {
                    match *session {
                        true => self.settings.set("default_transaction_read_only", on_off(r))?,
                        false => self.block_read_only = Some(r),
                    }
                }
                if let Some(l) = iso {
                    if *session {
                        self.settings.set("default_transaction_isolation", iso_name(l))?;
                    } else {
                        if self.txn.is_some() && self.state == TxnState::Block {
                            bail!(
                                ActiveSqlTransaction,
                                "SET TRANSACTION ISOLATION LEVEL must be called before any query"
                            );
                        }
                        self.block_isolation = Some(l);
                    }
                }
            }
            S::SetNames { .. } | S::SetNamesDefault {} => {}
            S::SetRole { context_modifier, role_name } => {
                let local = *context_modifier == Some(ast::ContextModifier::Local);
                let role = role_name.as_ref().map_or_else(|| "none".into(), crate::bind::ident);
                self.set_role(&role, local)?;
            }
            S::SetSessionAuthorization(p) => {
                let user = match &p.kind {
                    ast::SetSessionAuthorizationParamKind::Default => self.user.to_string(),
                    ast::SetSessionAuthorizationParamKind::User(u) => crate::bind::ident(u),
                };
                let local = p.scope == ast::ContextModifier::Local;
                self.set_session_authorization(&user, local)?;
            }
            other => bail!(FeatureNotSupported, "SET form not supported yet: {other}"),
        }
        Ok(Outcome::Command("SET".into()))
    }
}

/// The settings that say who the session is: changed only through SET
/// ROLE and SET SESSION AUTHORIZATION (and their checks), kept by RESET
/// ALL.
const IDENTITY_SETTINGS: &[&str] = &["role", "session_authorization", "is_superuser"];

pub(super) fn parse_isolation(s: &str) -> Result<IsolationLevel> {
    Ok(match s.to_lowercase().replace(['_', '-'], " ").trim() {
        "read committed" | "read uncommitted" => IsolationLevel::ReadCommitted,
        "repeatable read" => IsolationLevel::RepeatableRead,
        "serializable" => IsolationLevel::Serializable,
        other => bail!(
            InvalidParameterValue,
            "invalid value for parameter \"transaction_isolation\": \"{other}\""
        ),
    })
}

fn iso_name(l: IsolationLevel) -> &'static str {
    match l {
        IsolationLevel::ReadCommitted => "read committed",
        IsolationLevel::RepeatableRead => "repeatable read",
        IsolationLevel::Serializable => "serializable",
    }
}

/// A transaction's modes: isolation level and READ ONLY / READ WRITE
/// (None where not given).
fn txn_modes(modes: &[ast::TransactionMode]) -> Result<(Option<IsolationLevel>, Option<bool>)> {
    let (mut lvl, mut read_only) = (None, None);
    for m in modes {
        match m {
            ast::TransactionMode::IsolationLevel(l) => {
                lvl = Some(match l {
                    ast::TransactionIsolationLevel::ReadUncommitted
                    | ast::TransactionIsolationLevel::ReadCommitted => {
                        IsolationLevel::ReadCommitted
                    }
                    ast::TransactionIsolationLevel::RepeatableRead => {
                        IsolationLevel::RepeatableRead
                    }
                    ast::TransactionIsolationLevel::Serializable => IsolationLevel::Serializable,
                    other => bail!(FeatureNotSupported, "isolation level {other} is not supported"),
                })
            }
            ast::TransactionMode::AccessMode(mode) => {
                read_only = Some(matches!(mode, ast::TransactionAccessMode::ReadOnly));
            }
        }
    }
    Ok((lvl, read_only))
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

impl<K: KvClient> Session<K> {
    /// SET CONSTRAINTS { ALL | names } { DEFERRED | IMMEDIATE }: sets when
    /// the named deferrable constraints are checked for the rest of the
    /// transaction; IMMEDIATE also runs their checks queued so far.
    pub(super) async fn set_constraints(
        &mut self,
        names: Option<&[crate::catalog::ObjName]>,
        deferred: bool,
    ) -> Result<Outcome> {
        let tag = || Ok(Outcome::Command("SET CONSTRAINTS".into()));
        if self.state != TxnState::Block {
            self.notices.push(ErrorReport::warning(
                sqlstate::SqlState::NoActiveSqlTransaction,
                "SET CONSTRAINTS can only be used in transaction blocks",
            ));
            return tag();
        }
        self.start_statement().await?;
        let mut chosen = Vec::new();
        match names {
            None => self.deferred.set_all(deferred),
            Some(names) => {
                for n in names {
                    for fk in deferrable_constraints(&self.catalog, n)? {
                        self.deferred.set_one(fk, deferred);
                        chosen.push(fk);
                    }
                }
            }
        }
        if !deferred {
            let which = |fk: u32| names.is_none() || chosen.contains(&fk);
            let (tenant, cat, defer) =
                (self.db.tenant, self.catalog.clone(), self.deferred.clone());
            let txn = self.txn.as_mut().expect("start_statement opened a transaction");
            defer.run(txn, tenant, &cat, &which).await?;
        }
        tag()
    }
}

/// The constraints SET CONSTRAINTS `n` names, as OIDs: in its
/// schema, or in the first schema of the search path that has one. 42704
/// if none does, 42809 if one of them is not deferrable.
fn deferrable_constraints(
    cat: &crate::catalog::Catalog,
    n: &crate::catalog::ObjName,
) -> Result<Vec<u32>> {
    for &ns in cat.lookup_path(n, false)?.iter() {
        let tables = cat.tables.values().filter(|t| t.namespace == ns);
        let mut found = Vec::new();
        for t in tables {
            let fk = t.foreign_keys.iter().find(|f| f.name == n.name);
            // A deferrable UNIQUE or PRIMARY KEY constraint is checked at
            // the end of each statement either way (compatibility.md).
            let pkey = t.pkey_name.as_deref() == Some(n.name.as_str());
            let unique = t.indexes.iter().find(|i| i.constraint && i.name == n.name);
            if (pkey && t.pkey_deferral.is_some()) || unique.is_some_and(|i| i.deferral.is_some()) {
                found.push(if pkey { t.pkey_oid } else { unique.map_or(0, |i| i.oid) });
                continue;
            }
            let other = pkey || t.checks.iter().any(|c| c.name == n.name) || unique.is_some();
            let not_deferrable =
                || err!(WrongObjectType, "constraint \"{}\" is not deferrable", n.name);
            match fk {
                Some(f) if f.deferrable => found.push(f.oid),
                Some(_) => return Err(not_deferrable()),
                None if other => return Err(not_deferrable()),
                None => {}
            }
        }
        if !found.is_empty() {
            return Ok(found);
        }
    }
    bail!(UndefinedObject, "constraint \"{}\" does not exist", n.name)
}

/// `SET TIME ZONE INTERVAL '+05:30' HOUR TO MINUTE`: the zone at that
/// constant offset east of UTC, by the name PostgreSQL shows for it
/// (`<+05:30>-05:30`); 22023 for an interval with days or months.
fn interval_zone(value: &ast::Expr, iv: &ast::Interval) -> Result<String> {
    let invalid = |shown: &dyn std::fmt::Display| {
        err!(InvalidParameterValue, "invalid value for parameter \"TimeZone\": \"{shown}\"")
    };
    let Some(Ok(Value::Interval(i))) = crate::bind::interval_constant(iv) else {
        return Err(invalid(value));
    };
    let shown = format!("INTERVAL '{}'", sqltypes::interval::format_interval(&i));
    if i.months != 0 {
        return Err(invalid(&shown).with_detail("Cannot specify months in time zone interval."));
    }
    if i.days != 0 {
        return Err(invalid(&shown).with_detail("Cannot specify days in time zone interval."));
    }
    let east = i32::try_from(i.micros / 1_000_000).map_err(|_| invalid(&shown))?;
    Ok(sqltypes::Zone::displacement(east)?.name().to_string())
}
