//! COPY FROM STDIN / TO STDOUT for a session: the copy state, batching of
//! incoming rows into writes, DEFAULTs (with sequence refills) and output.

use super::*;

const BATCH_ROWS: usize = 4096;

/// A COPY FROM STDIN in progress.
pub(super) struct CopyIn {
    parser: CopyParser,
    table: Arc<crate::catalog::TableDef>,
    columns: Vec<usize>,
    rows: Vec<Row>,
    count: u64,
    private: bool,
}

impl<K: KvClient> Session<K> {
    pub(super) async fn copy(&mut self, c: CopyStmt) -> Result<Outcome> {
        self.start_statement().await?;
        if let Some(q) = &c.query {
            return self.copy_query_out(&c, q).await;
        }
        let mut table = self.catalog.must_table(&c.table)?;
        if let Some(mv) = &table.matview {
            if c.from {
                bail!(WrongObjectType, "cannot copy to materialized view \"{}\"", table.name);
            }
            if !mv.populated {
                bail!(
                    ObjectNotInPrerequisiteState,
                    "cannot copy from unpopulated materialized view \"{}\"",
                    table.name
                );
            }
        }
        let check = crate::acl::Check {
            rel: crate::catalog::Relation::Table(table.clone()),
            privs: if c.from { crate::acl::INSERT } else { crate::acl::SELECT },
            as_user: None,
        };
        crate::acl::check_all(&self.catalog, self.current_user(), &[check])?;
        if c.from {
            let mut attempts = 1;
            while self.lock_table_for_write(table.oid, attempts < 10).await? {
                table = self.catalog.must_table(&c.table)?;
                attempts += 1;
            }
        }
        let columns: Vec<usize> = if c.columns.is_empty() {
            (0..table.columns.len()).collect()
        } else {
            c.columns
                .iter()
                .map(|n| {
                    table.column_index(n).ok_or_else(|| {
                        err!(
                            UndefinedColumn,
                            "column \"{n}\" of relation \"{}\" does not exist",
                            table.name
                        )
                    })
                })
                .collect::<Result<_>>()?
        };
        if !c.from {
            return self.copy_out(&c, &table, &columns).await;
        }
        let types: Vec<DataType> = columns.iter().map(|&i| table.columns[i].ty.to_type()).collect();
        let names: Vec<String> = columns.iter().map(|&i| table.columns[i].name.clone()).collect();
        let n = columns.len();
        let binary = c.format == crate::parse::CopyFormat::Binary;
        let private = self.fresh.contains(&table.storage);
        self.copy = Some(CopyIn {
            parser: CopyParser::new(c, types, names).in_zone(self.settings.zone()).with_domains(
                columns.iter().map(|&i| table.columns[i].ty.domain.clone()).collect(),
            ),
            table,
            columns,
            rows: Vec::new(),
            count: 0,
            private,
        });
        Ok(Outcome::CopyIn { columns: n, binary })
    }

    pub(super) async fn copy_out(
        &mut self,
        c: &CopyStmt,
        table: &Arc<crate::catalog::TableDef>,
        columns: &[usize],
    ) -> Result<Outcome> {
        if table.is_partitioned() {
            return Err(err!(
                WrongObjectType,
                "cannot copy from partitioned table \"{}\"",
                table.name
            )
            .with_hint("Try the COPY (SELECT ...) TO variant."));
        }
        let txn = self.txn.as_ref().expect("statement has a transaction");
        let ctx = self.eval_ctx(&[]);
        let cx = ExecCtx { txn, tenant: self.db.tenant, eval: &ctx, catalog: &self.catalog };
        let scan = crate::plan::Scan::full(table.clone(), false);
        let rows = exec::scan_rows(&cx, &scan).await?;
        let names: Vec<String> = columns.iter().map(|&i| table.columns[i].name.clone()).collect();
        let rows =
            rows.into_iter().map(|(_, row)| columns.iter().map(|&i| row[i].clone()).collect());
        Ok(copy_out_data(c, &names, rows, &self.settings.zone()))
    }

    /// COPY (query) TO STDOUT.
    async fn copy_query_out(&mut self, c: &CopyStmt, q: &ast::Statement) -> Result<Outcome> {
        let stmt = Stmt::Sql(Box::new(q.clone()));
        let (bound, _) = planner::plan(&self.catalog, &stmt, &[], self.current_user())?;
        let Bound::Query(plan, columns) = bound.as_ref() else {
            bail!(FeatureNotSupported, "COPY (statement) supports only queries yet");
        };
        let txn = self.txn.as_ref().expect("statement has a transaction");
        let ctx = self.eval_ctx(&[]);
        let cx = ExecCtx { txn, tenant: self.db.tenant, eval: &ctx, catalog: &self.catalog };
        let rows = exec::run(plan, &cx).await?;
        let names: Vec<String> = columns.iter().map(|col| col.name.clone()).collect();
        Ok(copy_out_data(c, &names, rows.into_iter(), &self.settings.zone()))
    }

    /// Takes a chunk of COPY FROM STDIN data.
    pub async fn copy_data(&mut self, data: &[u8]) -> Result<()> {
        let r = self.copy_data_inner(data).await;
        if r.is_err() {
            self.copy = None;
            self.fail_txn();
        }
        r
    }

    pub(super) async fn copy_data_inner(&mut self, data: &[u8]) -> Result<()> {
        let Some(cp) = self.copy.as_mut() else { bail!(ProtocolViolation, "unexpected COPY data") };
        cp.parser.feed(data, &mut cp.rows)?;
        if cp.rows.len() >= BATCH_ROWS {
            self.flush_copy().await?;
        }
        Ok(())
    }

    pub(super) async fn flush_copy(&mut self) -> Result<()> {
        let tenant = self.db.tenant;
        let now = self.txn_time;
        let catalog = self.catalog.clone();
        // What a column default may read: the catalog (nextval('s'::regclass)),
        // the settings and zone (now()::text), the user, random().
        let ctx = EvalContext {
            txn_time: now,
            stmt_time: now,
            txid: self.txid,
            seqs: self.seq_context(),
            catalog: Some(catalog.clone()),
            settings: self.settings_snapshot(),
            zone: Some(self.settings.zone()),
            user: self.current_user_arc(),
            session_user: self.session_user_arc(),
            random: Some(self.random.clone()),
            ..Default::default()
        };
        let Some(cp) = self.copy.as_ref() else { return Ok(()) };
        let table = cp.table.clone();
        let mut defaults = Vec::new();
        for (i, c) in table.columns.iter().enumerate() {
            if !cp.columns.contains(&i) {
                if let Some(d) = ddl::column_default(&catalog, c)? {
                    defaults.push((i, d));
                }
            }
        }
        // Defaults may call nextval, which may need a new block of values
        // first (see sequence.rs): then the batch is built again, its
        // nextval calls handed the values the failed attempt took.
        self.seqs.lock().start_attempt();
        let rows = loop {
            let Some(cp) = self.copy.as_ref() else { return Ok(()) };
            let err = match copy_rows(&table, cp, &defaults, &ctx) {
                Ok(rows) => break rows,
                Err(e) => e,
            };
            let Some(req) = self.seqs.lock().request.take() else { return Err(err) };
            self.seqs.lock().retry();
            self.serve_sequence_request(req).await?;
        };
        let (Some(cp), Some(txn)) = (self.copy.as_mut(), self.txn.as_mut()) else { return Ok(()) };
        cp.rows.clear();
        cp.count += rows.len() as u64;
        // Into a partitioned table, each row goes to the leaf that takes it.
        let routed = table.is_partitioned();
        let (groups, private) = match routed {
            true => (crate::partition::split(&catalog.partitions, &table, rows)?, false),
            false => (vec![(table, rows)], cp.private),
        };
        for (table, mut rows) in groups {
            if routed {
                for row in &mut rows {
                    dml::check_row(&table, row)?;
                }
            }
            dml::insert_rows(txn, tenant, &table, &rows, private).await?;
            // Checked per batch: a parent row arriving in a later batch of the
            // same COPY does not satisfy a reference (PostgreSQL checks at the end).
            if !table.foreign_keys.is_empty() {
                let defer = Some(&*self.deferred);
                crate::fk::check_references(txn, tenant, &self.catalog, &table, &rows, None, defer)
                    .await?;
            }
        }
        Ok(())
    }

    /// CopyDone: loads the remaining rows; returns the tag.
    pub async fn copy_done(&mut self) -> Result<String> {
        let r = async {
            let Some(cp) = self.copy.as_mut() else {
                bail!(ProtocolViolation, "unexpected CopyDone")
            };
            cp.parser.finish(&mut cp.rows)?;
            self.flush_copy().await?;
            Ok(self.copy.take().map(|c| c.count).unwrap_or(0))
        }
        .await;
        match r {
            Ok(n) => Ok(format!("COPY {n}")),
            Err(e) => {
                self.copy = None;
                self.fail_txn();
                Err(e)
            }
        }
    }

    /// CopyFail from the client.
    pub fn copy_fail(&mut self, msg: &str) -> ErrorReport {
        self.copy = None;
        self.fail_txn();
        err!(QueryCanceled, "COPY from stdin failed: {msg}")
    }
}

/// Builds full table rows from a batch of COPY rows: copied columns in
/// place, DEFAULTs for the others, NOT NULL and lengths checked.
fn copy_rows(
    table: &TableDef,
    cp: &CopyIn,
    defaults: &[(usize, crate::expr::Expr)],
    ctx: &EvalContext,
) -> Result<Vec<Row>> {
    let mut rows = Vec::with_capacity(cp.rows.len());
    for src in &cp.rows {
        let mut row = vec![Value::Null; table.columns.len()];
        for (v, &c) in src.iter().zip(&cp.columns) {
            row[c] = v.clone();
        }
        for (i, d) in defaults {
            row[*i] = d.eval(&[], ctx)?;
        }
        // A partitioned table's rows are checked by the partition they go to.
        if !table.is_partitioned() {
            dml::check_row(table, &mut row)?;
        }
        rows.push(row);
    }
    Ok(rows)
}

/// Formats COPY TO output: an optional header line, one message per row,
/// and for the binary format the signature in the first message (with the
/// first row, as PostgreSQL sends it; psycopg relies on that) and a trailer.
fn copy_out_data(
    c: &CopyStmt,
    names: &[String],
    rows: impl Iterator<Item = Row>,
    zone: &sqltypes::Zone,
) -> Outcome {
    let binary = c.format == crate::parse::CopyFormat::Binary;
    let mut lines = Vec::new();
    if c.header && !binary {
        let names: Vec<Value> = names.iter().map(|n| Value::Text(n.clone())).collect();
        let mut l = Vec::new();
        crate::copy::format_row(&names, c, zone, &mut l);
        lines.push(l);
    }
    let mut count = 0;
    let mut header = if binary { crate::copy::binary_header() } else { vec![] };
    for row in rows {
        let mut l = std::mem::take(&mut header);
        crate::copy::format_row(&row, c, zone, &mut l);
        lines.push(l);
        count += 1;
    }
    if binary {
        header.extend_from_slice(&crate::copy::BINARY_TRAILER);
        lines.push(header);
    }
    Outcome::CopyOut { columns: names.len(), binary, data: lines, count }
}
