//! Running the DDL that Strata parses itself (parse.rs: ALTER SEQUENCE and
//! ALTER VIEW/SEQUENCE/INDEX ... OWNER TO, SET SCHEMA, ALTER VIEW ...
//! RENAME TO), which has no sqlparser form.

use super::*;

impl<K: KvClient> Session<K> {
    /// Runs ALTER SEQUENCE or OWNER TO; the statement has started.
    pub(super) async fn own_ddl(&mut self, stmt: &Stmt) -> Result<Outcome> {
        self.lock_catalog().await?;
        let tenant = self.db.tenant;
        let catalog = self.catalog.clone();
        let user = self.current_user().to_string();
        let txn = self.txn.as_mut().expect("DDL statement has a transaction");
        let r = match stmt {
            Stmt::RenameTrigger(r) => ddl::rename_trigger(txn, tenant, &catalog, r).await?,
            Stmt::CommentOnFunction(desc, procedure, text) => {
                ddl::comment_function(txn, tenant, &catalog, desc, *procedure, text.clone(), &user)
                    .await?
            }
            Stmt::CreateProcedure(cf) => {
                let settings = &self.settings;
                ddl::create_function(txn, tenant, &catalog, cf, &user, settings, true).await?
            }
            Stmt::AlterSequence(a) => ddl::alter_sequence(txn, tenant, &catalog, a).await?,
            Stmt::AlterIdentity(a) => ddl::alter_identity(txn, tenant, &catalog, a).await?,
            Stmt::AlterOwner(a) => ddl::alter_owner(txn, tenant, &catalog, a, &user).await?,
            Stmt::GrantRole(g) => ddl::role_membership(txn, tenant, &catalog, &user, g).await?,
            Stmt::GrantOnType(g) => ddl::type_privileges(txn, tenant, &catalog, &user, g).await?,
            Stmt::Owned(o) => {
                let roles = ddl::owned_roles(&catalog, &user, o)?;
                let Some(to) = &o.to else {
                    bail!(InternalError, "DROP OWNED reached REASSIGN OWNED");
                };
                ddl::reassign_owned(txn, tenant, &catalog, &user, &roles, to).await?
            }
            Stmt::AlterDefaultPrivileges(a) => {
                ddl::default_privileges(txn, tenant, &catalog, &user, a).await?
            }
            Stmt::AlterName(a) => ddl::alter_name(txn, tenant, &catalog, a).await?,
            Stmt::CreateDomain(d) => ddl::create_domain(txn, tenant, &catalog, d, &user).await?,
            Stmt::AlterDomain(a) => ddl::alter_domain(txn, tenant, &catalog, a).await?,
            Stmt::DropDomain(d) => ddl::drop_domains(txn, tenant, &catalog, d).await?,
            Stmt::Partition(c) => ddl::partition_cmd(txn, tenant, &catalog, c).await?,
            Stmt::AlterView(at) => ddl::alter_view(txn, tenant, &catalog, at).await?,
            Stmt::CreateTrigger(ct, args) => {
                ddl::create_trigger(txn, tenant, &catalog, ct, args).await?
            }
            _ => bail!(InternalError, "not a statement parsed by Strata"),
        };
        self.finish_ddl(r).await
    }

    /// DROP OWNED BY roles \[CASCADE\]: revokes what was granted to them,
    /// then drops what they own, one kind at a time (each DROP reads the
    /// catalog the previous one left).
    pub(super) async fn drop_owned(&mut self, o: &parse::Owned) -> Result<Outcome> {
        self.lock_catalog().await?;
        let tenant = self.db.tenant;
        let user = self.current_user().to_string();
        let roles = ddl::owned_roles(&self.catalog, &user, o)?;
        let catalog = self.catalog.clone();
        let txn = self.txn.as_mut().expect("DDL statement has a transaction");
        let r = ddl::revoke_owned(txn, tenant, &catalog, &roles).await?;
        self.finish_ddl(r).await?;
        // Each pass drops one kind; cascades only take objects away.
        for _ in 0..8 {
            let Some(kind) = ddl::owned_objects(&self.catalog, &roles).into_iter().next() else {
                break;
            };
            let catalog = self.catalog.clone();
            let txn = self.txn.as_mut().expect("DDL statement has a transaction");
            let r = match &kind {
                ddl::OwnedKind::Objects(k, names) => {
                    ddl::drop(txn, tenant, &catalog, k, names, true, o.cascade).await?
                }
                ddl::OwnedKind::Extensions(names) => {
                    ddl::drop_extensions(txn, tenant, &catalog, names, true, o.cascade).await?
                }
                ddl::OwnedKind::Schemas(names) => {
                    ddl::drop_schemas(txn, tenant, &catalog, names, true, o.cascade).await?
                }
            };
            self.finish_ddl(r).await?;
        }
        Ok(Outcome::Command("DROP OWNED".into()))
    }
}
