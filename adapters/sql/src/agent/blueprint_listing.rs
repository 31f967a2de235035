//! Blueprint listings: the filters every listing shares, and the pages of
//! `svc_ops_list_blueprints`, read without the columns a listing does not show (source, compiled
//! code, vector), so a page costs its rows' descriptions and contracts, not their components.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, Condition, DatabaseConnection, EntityTrait, FromQueryResult, QueryFilter, QueryOrder, QuerySelect,
    Select,
};
use svc_application::ports::RepositoryError;
use svc_application::ports::blueprints::{BlueprintFilter, BlueprintListing, ListingPosition, MANIFEST_GENERATOR};

use super::blueprints::source_kind;
use super::entities::blueprint;
use super::seam::{contract_from_text, from_text};
use crate::errors::repository_error;

/// The rows `filter` matches (every listing's filters, AND-composed).
pub(super) fn matching(filter: &BlueprintFilter) -> Select<blueprint::Entity> {
    use blueprint::Column as C;
    let mut query = blueprint::Entity::find();
    if let Some(apps) = &filter.app_ids {
        query = query.filter(C::AppId.is_in(apps.clone()));
    }
    if let Some(hash) = &filter.contract_hash {
        query = query.filter(C::ContractHash.eq(hash.clone()));
    }
    if let Some(generator) = &filter.generator {
        query = query.filter(C::Generator.eq(generator.clone()));
    }
    if let Some(persona) = filter
        .persona
        .as_deref()
        .and_then(svc_domain::blueprint::normalize_persona)
    {
        query = query.filter(C::Persona.eq(persona));
    }
    if filter.featured_only {
        query = query.filter(C::Featured.eq(true));
    }
    if filter.exclude_manifest {
        query = query.filter(C::Generator.ne(MANIFEST_GENERATOR));
    }
    query
}

#[derive(Debug, FromQueryResult)]
struct ListingRow {
    blueprint_id: String,
    intent: String,
    contract_hash: String,
    variant_key: String,
    contract: String,
    variance: String,
    code_hash: String,
    generator: String,
    model: Option<String>,
    source_kind: String,
    description: Option<String>,
    persona: Option<String>,
    aesthetic: Option<String>,
    fixture_props: Option<String>,
    is_operator_default: bool,
    /// The compiled code's first character: empty when no module is stored.
    code_head: String,
    created_at: DateTime<Utc>,
    updated_at: Option<DateTime<Utc>>,
}

/// At most `limit` rows of `filter` after `after`, oldest first (equal times by id).
pub(super) async fn page(
    db: &DatabaseConnection,
    filter: &BlueprintFilter,
    after: Option<&ListingPosition>,
    limit: u64,
) -> Result<Vec<BlueprintListing>, RepositoryError> {
    use blueprint::Column as C;
    let mut query = matching(filter).select_only().columns([
        C::BlueprintId,
        C::Intent,
        C::ContractHash,
        C::VariantKey,
        C::Contract,
        C::Variance,
        C::CodeHash,
        C::Generator,
        C::Model,
        C::SourceKind,
        C::Description,
        C::Persona,
        C::Aesthetic,
        C::FixtureProps,
        C::IsOperatorDefault,
        C::CreatedAt,
        C::UpdatedAt,
    ]);
    // SUBSTR with literal bounds reads the same on SQLite, PostgreSQL and MySQL (bound integers
    // would be typed differently by each).
    query = query.expr_as(Expr::cust("SUBSTR(code, 1, 1)"), "code_head");
    if let Some(after) = after {
        query = query.filter(
            Condition::any().add(C::CreatedAt.gt(after.created_at)).add(
                Condition::all()
                    .add(C::CreatedAt.eq(after.created_at))
                    .add(C::BlueprintId.gt(after.blueprint_id.clone())),
            ),
        );
    }
    query
        .order_by_asc(C::CreatedAt)
        .order_by_asc(C::BlueprintId)
        .limit(limit)
        .into_model::<ListingRow>()
        .all(db)
        .await
        .map_err(repository_error)?
        .into_iter()
        .map(listing)
        .collect()
}

fn listing(r: ListingRow) -> Result<BlueprintListing, RepositoryError> {
    Ok(BlueprintListing {
        contract: contract_from_text("blueprints.contract", &r.contract)?,
        variance: from_text("blueprints.variance", &r.variance)?,
        fixture_props: r
            .fixture_props
            .as_deref()
            .map(|text| from_text("blueprints.fixture_props", text))
            .transpose()?,
        source_kind: source_kind(&r.source_kind)?,
        servable: !r.code_head.is_empty(),
        updated_at: r.updated_at.unwrap_or(r.created_at),
        blueprint_id: r.blueprint_id,
        intent: r.intent,
        contract_hash: r.contract_hash,
        variant_key: r.variant_key,
        code_hash: r.code_hash,
        generator: r.generator,
        model: r.model,
        description: r.description,
        persona: r.persona,
        aesthetic: r.aesthetic,
        is_operator_default: r.is_operator_default,
        created_at: r.created_at,
    })
}
