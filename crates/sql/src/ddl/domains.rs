//! CREATE DOMAIN, ALTER DOMAIN and DROP DOMAIN. A domain is a user-defined
//! type's catalog row ([`catalog::UserTypeDef`] with its `domain` part):
//! the type it is over, NOT NULL, a default and CHECK constraints reading
//! the value as `VALUE`. Its values are stored as the base type's; a
//! column of the domain checks them on every write ([`catalog::Domain`]).

use sqlparser::ast::VisitMut;

use super::*;
use crate::parse::{AlterDomain, CreateDomain, DomainAction, DomainConstraint, DropDomain};
use catalog::{DomainCheck, DomainSpec, UserTypeDef, UserTypeKind};

/// CREATE DOMAIN.
pub async fn create_domain<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    d: &CreateDomain,
    owner: &str,
) -> Result<DdlResult> {
    let (namespace, name) = new_name(cat, &d.name)?;
    if types::type_exists(cat, namespace, &name) {
        bail!(DuplicateObject, "type \"{name}\" already exists");
    }
    if let Some(c) = &d.collation {
        crate::bind::collation(c)?;
    }
    let base = bind::column_type(cat, &d.data_type)?;
    let ty = base.to_type();
    let mut not_null = None;
    let mut checks: Vec<(Option<String>, ast::Expr)> = Vec::new();
    for c in &d.constraints {
        match c {
            DomainConstraint::NotNull | DomainConstraint::Null => {
                let nn = *c == DomainConstraint::NotNull;
                if not_null.is_some_and(|x| x != nn) {
                    bail!(SyntaxError, "conflicting NULL/NOT NULL constraints");
                }
                not_null = Some(nn);
            }
            DomainConstraint::Check { name, expr, .. } => {
                checks.push((name.as_ref().map(bind::ident), (**expr).clone()))
            }
        }
    }
    let default = match &d.default {
        Some(e) => {
            let text = crate::deparse::stored_default(cat, e, &ty);
            default_expr(cat, &name, &text, &ty)?;
            Some(text)
        }
        None => None,
    };
    bump_version(txn, tenant).await?;
    let first = alloc(txn, tenant, 2 + checks.len() as u64).await? as u32;
    let spec = DomainSpec { base, not_null: not_null.unwrap_or(false), default, checks: vec![] };
    let mut def =
        UserTypeDef { domain: Some(spec), ..UserTypeDef::new(cat, first, namespace, name, owner) };
    for (i, (name, e)) in checks.into_iter().enumerate() {
        let (check, _) = new_check(cat, &def, name, e, first + 2 + i as u32, true)?;
        spec_mut(&mut def).checks.push(check);
    }
    types::put(txn, tenant, &def).await?;
    Ok(DdlResult::tag("CREATE DOMAIN"))
}

/// The domain part of a domain's definition.
fn spec_mut(def: &mut UserTypeDef) -> &mut DomainSpec {
    def.domain.as_mut().expect("a domain's definition has its spec")
}

/// A CHECK constraint for domain `def`: bound to find mistakes, named
/// `<domain>_check` (numbered if taken) unless named, stored with `VALUE`
/// spelled as PostgreSQL prints it.
fn new_check(
    cat: &Catalog,
    def: &UserTypeDef,
    name: Option<String>,
    mut e: ast::Expr,
    oid: u32,
    validated: bool,
) -> Result<(DomainCheck, crate::expr::Expr)> {
    let ty = domain_values(cat, def)?;
    let bound = catalog::check_expr(cat, &e, &catalog::Domain::value_scope(&ty))?;
    let checks = &def.domain.as_ref().map_or(&[][..], |s| &s.checks[..]);
    let taken = |n: &str| checks.iter().any(|c| c.name == n);
    let name = match name {
        Some(n) if taken(&n) => {
            bail!(DuplicateObject, "constraint \"{n}\" for domain \"{}\" already exists", def.name)
        }
        Some(n) => n,
        None => free_name(format!("{}_check", def.name), taken),
    };
    let _ = e.visit(&mut ValueKeyword);
    let check = DomainCheck { oid, name, expr: crate::deparse::stored_text(cat, &e), validated };
    Ok((check, bound))
}

/// Spells an unquoted `value` as `VALUE`.
struct ValueKeyword;

impl ast::VisitorMut for ValueKeyword {
    type Break = ();

    fn post_visit_expr(&mut self, e: &mut ast::Expr) -> std::ops::ControlFlow<()> {
        if let ast::Expr::Identifier(i) = e {
            if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("value") {
                i.value = "VALUE".into();
            }
        }
        std::ops::ControlFlow::Continue(())
    }
}

/// The type of domain `def`'s values.
fn domain_values(cat: &Catalog, def: &UserTypeDef) -> Result<DataType> {
    let Some(spec) = &def.domain else {
        bail!(WrongObjectType, "\"{}\" is not a domain", def.name)
    };
    Ok(spec.base_in(cat).to_type())
}

/// The domain `name` names (42704 if nothing, 42809 if not a domain).
fn must_get_domain(cat: &Catalog, name: &ast::ObjectName) -> Result<UserTypeDef> {
    let def = types::must_get(cat, &bind::obj_name(name)?, false)?;
    if def.domain.is_none() {
        let shown = crate::func::catalog_info::format_type(Some(cat), def.oid, None);
        bail!(WrongObjectType, "{shown} is not a domain");
    }
    Ok(def)
}

/// ALTER DOMAIN's own actions (OWNER TO, RENAME TO and SET SCHEMA run as
/// the other types' do).
pub async fn alter_domain<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    a: &AlterDomain,
) -> Result<DdlResult> {
    let mut def = must_get_domain(cat, &a.name)?;
    let mut r = DdlResult::tag("ALTER DOMAIN");
    let ty = domain_values(cat, &def)?;
    let dname = def.name.clone();
    // The constraint named `n`, or its folded name.
    let position = |def: &UserTypeDef, n: &ast::Ident| {
        let n = bind::ident(n);
        let checks = def.domain.as_ref().map_or(&[][..], |s| &s.checks[..]);
        checks.iter().position(|c| c.name == n).ok_or(n)
    };
    let missing =
        |n: &str| err!(UndefinedObject, "constraint \"{n}\" of domain \"{dname}\" does not exist");
    bump_version(txn, tenant).await?;
    match &a.action {
        DomainAction::SetDefault(e) => {
            let text = crate::deparse::stored_default(cat, e, &ty);
            default_expr(cat, &def.name, &text, &ty)?;
            spec_mut(&mut def).default = Some(text);
        }
        DomainAction::DropDefault => spec_mut(&mut def).default = None,
        DomainAction::NotNull(true) => {
            validate(txn, tenant, cat, def.oid, None).await?;
            spec_mut(&mut def).not_null = true;
        }
        DomainAction::NotNull(false) => spec_mut(&mut def).not_null = false,
        DomainAction::Add(DomainConstraint::Check { name, expr, not_valid }) => {
            let oid = alloc(txn, tenant, 1).await? as u32;
            let name = name.as_ref().map(bind::ident);
            let (check, bound) = new_check(cat, &def, name, (**expr).clone(), oid, !*not_valid)?;
            if !*not_valid {
                validate(txn, tenant, cat, def.oid, Some(&bound)).await?;
            }
            spec_mut(&mut def).checks.push(check);
        }
        DomainAction::Add(_) => {
            bail!(SyntaxError, "use ALTER DOMAIN .. SET NOT NULL instead")
        }
        DomainAction::DropConstraint { name, if_exists } => match position(&def, name) {
            Ok(i) => {
                spec_mut(&mut def).checks.remove(i);
            }
            Err(n) if *if_exists => {
                let msg =
                    format!("constraint \"{n}\" of domain \"{dname}\" does not exist, skipping");
                r.notices.push(notice(msg));
                return Ok(r);
            }
            Err(n) => return Err(missing(&n)),
        },
        DomainAction::RenameConstraint(old, new) => {
            let i = position(&def, old).map_err(|n| missing(&n))?;
            if let Ok(taken) = position(&def, new) {
                let new = &spec_mut(&mut def).checks[taken].name;
                bail!(
                    DuplicateObject,
                    "constraint \"{new}\" for domain \"{dname}\" already exists"
                );
            }
            spec_mut(&mut def).checks[i].name = bind::ident(new);
        }
        DomainAction::Validate(n) => {
            let i = position(&def, n).map_err(|n| missing(&n))?;
            let check = &spec_mut(&mut def).checks[i];
            let scope = catalog::Domain::value_scope(&ty);
            let bound =
                catalog::check_expr(cat, &catalog::parse_stored(&check.expr, "CHECK")?, &scope)?;
            validate(txn, tenant, cat, def.oid, Some(&bound)).await?;
            spec_mut(&mut def).checks[i].validated = true;
        }
    }
    types::put(txn, tenant, &def).await?;
    Ok(r)
}

/// Whether `d` is domain `oid` or is over it.
fn is_over(d: &catalog::Domain, oid: u32) -> bool {
    d.def.oid == oid || d.base.as_ref().is_some_and(|b| is_over(b, oid))
}

/// Checks the values stored in columns of domain `oid` (or of domains
/// over it): not NULL (`cond` None), or the condition `cond` (bound over
/// the value) not false.
async fn validate<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    oid: u32,
    cond: Option<&crate::expr::Expr>,
) -> Result<()> {
    let ctx = crate::expr::EvalContext::default();
    for t in cat.tables.values() {
        let cols: Vec<usize> = (0..t.columns.len())
            .filter(|&i| t.columns[i].ty.domain.as_ref().is_some_and(|d| is_over(d, oid)))
            .collect();
        if cols.is_empty() {
            continue;
        }
        lock_table(txn, tenant, t.oid).await?;
        let mut next = Some(keys::storage(tenant, t.storage).start);
        while let Some(start) = next {
            let (rows, n) = table_batch(txn, tenant, t, start).await?;
            next = n;
            for (_, row) in rows {
                for &c in &cols {
                    let v = &row[c];
                    let (bad, code, what) = match cond {
                        None => (v.is_null(), sqlstate::SqlState::NotNullViolation, "null values"),
                        Some(e) => (
                            matches!(e.eval(std::slice::from_ref(v), &ctx)?, Value::Bool(false)),
                            sqlstate::SqlState::CheckViolation,
                            "values that violate the new constraint",
                        ),
                    };
                    if bad {
                        let msg = format!(
                            "column \"{}\" of table \"{}\" contains {what}",
                            t.columns[c].name, t.name
                        );
                        return Err(ErrorReport::new(code, msg));
                    }
                }
            }
        }
    }
    Ok(())
}

/// DROP DOMAIN: DROP TYPE for domains only.
pub async fn drop_domains<T: Txn>(
    txn: &mut T,
    tenant: TenantId,
    cat: &Catalog,
    d: &DropDomain,
) -> Result<DdlResult> {
    for n in &d.names {
        if let Some((def, UserTypeKind::Enum(_))) = cat.user_type_named(&bind::obj_name(n)?)? {
            bail!(WrongObjectType, "\"{}\" is not a domain", def.name);
        }
    }
    let mut r = types::drop_types(txn, tenant, cat, &d.names, d.if_exists).await?;
    r.tag = "DROP DOMAIN".into();
    Ok(r)
}
