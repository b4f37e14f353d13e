//! Statements that act on the session rather than on data: BEGIN,
//! COMMIT, ROLLBACK (and savepoints), SET, RESET and SHOW.

use super::*;

impl<K: KvClient> Session<K> {
    /// Transaction control and session commands that do not need a
    /// transaction. Returns None for other statements.
    pub(super) async fn control(&mut self, stmt: &ast::Statement) -> Result<Option<Outcome>> {
        if matches!(stmt, ast::Statement::Set(_) | ast::Statement::Reset(_)) {
            self.settings_generation += 1;
        }
        use ast::Statement as S;
        Ok(Some(match stmt {
            S::StartTransaction { modes, .. } => {
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
                Outcome::Command("BEGIN".into())
            }
            S::Commit { .. } => {
                let tag = match self.state {
                    TxnState::Failed => {
                        self.savepoints.clear();
                        self.fail_txn();
                        self.state = TxnState::Idle;
                        "ROLLBACK"
                    }
                    TxnState::Block => {
                        self.state = TxnState::Idle;
                        self.block_isolation = None;
                        self.block_read_only = None;
                        self.commit_txn().await?;
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
                if let Some(t) = self.txn.take() {
                    t.abort();
                }
                self.reset_txn_info();
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
                let name: Vec<String> = variable.iter().map(crate::bind::ident).collect();
                let name = name.join(" ");
                let v = match name.as_str() {
                    "transaction isolation level" | "transaction_isolation" => {
                        iso_name(self.isolation()?).to_string()
                    }
                    "transaction_read_only" => on_off(self.read_only()).to_string(),
                    "all" => {
                        let rows = self
                            .settings
                            .all()
                            .map(|(k, v)| vec![Value::Text(k.clone()), Value::Text(v.clone())])
                            .collect();
                        return Ok(Some(Outcome::Rows(rows, "SHOW".into())));
                    }
                    n => self.settings.get(n)?,
                };
                Outcome::Rows(vec![vec![Value::Text(v)]], "SHOW".into())
            }
            S::Reset(r) => {
                match &r.reset {
                    ast::Reset::ALL => self.settings = Settings::default(),
                    ast::Reset::ConfigurationParameter(n) => {
                        self.settings.reset(&crate::bind::object_name(n)?)?
                    }
                    ast::Reset::SessionAuthorization => {}
                }
                Outcome::Command("RESET".into())
            }
            S::Discard { .. } => Outcome::Command("DISCARD ALL".into()),
            _ => return Ok(None),
        }))
    }

    pub(super) fn set(&mut self, set: &ast::Set) -> Result<Outcome> {
        use ast::Set as S;
        match set {
            S::SingleAssignment { variable, values, .. } => {
                let name = crate::bind::object_name(variable)?;
                let value = values.iter().map(set_value).collect::<Vec<_>>().join(", ");
                if name == "transaction_isolation" || name == "default_transaction_isolation" {
                    let lvl = parse_isolation(&value)?;
                    if name == "transaction_isolation" {
                        self.block_isolation = Some(lvl);
                        return Ok(Outcome::Command("SET".into()));
                    }
                    self.settings.set(&name, iso_name(lvl))?;
                } else {
                    self.settings.set(&name, &value)?;
                }
            }
            S::SetTimeZone { value, .. } => self.settings.set("TimeZone", &set_value(value))?,
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
            other => bail!(FeatureNotSupported, "SET form not supported yet: {other}"),
        }
        Ok(Outcome::Command("SET".into()))
    }
}

fn set_value(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => s.clone(),
            ast::Value::Number(n, _) => n.clone(),
            ast::Value::Boolean(b) => {
                if *b {
                    "on".into()
                } else {
                    "off".into()
                }
            }
            other => other.to_string(),
        },
        ast::Expr::Identifier(i) => i.value.clone(),
        other => other.to_string(),
    }
}

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
