//! `GET /search`: one hit per package (its highest published version), filters AND-composed.

use svc_domain::artifact::{ArtifactKind, ArtifactManifest, ArtifactScope, ArtifactVersion, Visibility};

use super::{RegistryError, RegistryService};
use crate::ports::registry::{ArtifactQuery, Publisher, ResultPage};

/// Most hits one search answers.
pub const SEARCH_LIMIT: usize = 100;

/// Latest versions read from the store at a time: the limit and room for loose matches.
const SEARCH_PAGE: u64 = 2 * SEARCH_LIMIT as u64;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchQuery {
    pub q: Option<String>,
    pub kind: Option<String>,
    pub hook: Option<String>,
    pub tag: Option<String>,
    /// Publisher name, with or without `@`.
    pub author: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub scope: String,
    pub name: String,
    pub latest_version: String,
    pub kind: ArtifactKind,
    pub description: String,
    pub tags: Vec<String>,
    pub author: String,
}

impl RegistryService {
    pub async fn search(
        &self,
        caller: Option<&Publisher>,
        query: SearchQuery,
    ) -> Result<Vec<SearchHit>, RegistryError> {
        let kind = match query.kind.as_deref().filter(|k| !k.is_empty()) {
            None => None,
            Some(raw) => Some(ArtifactKind::parse(raw).ok_or_else(|| {
                RegistryError::InvalidRequest(format!("`kind` must be `gadget` or `blueprint`, not {raw:?}"))
            })?),
        };
        let scope = match query.author.as_deref().filter(|a| !a.is_empty()) {
            None => None,
            Some(author) => match ArtifactScope::of_publisher(author.trim_start_matches('@')) {
                Ok(scope) => Some(scope),
                // No publisher can have that name: nothing matches.
                Err(_) => return Ok(Vec::new()),
            },
        };
        let store_query = ArtifactQuery {
            kind,
            scope,
            include_private: caller.is_some(),
            text: given(&query.q).map(|q| q.to_lowercase()),
            tag: given(&query.tag),
            hook: given(&query.hook),
        };
        // The store answers each package's latest version, already narrowed (loosely); pages
        // are read until the limit is filled by exact matches, so a search costs the hits it
        // returns, not every version ever published.
        let mut hits = Vec::new();
        let mut page = ResultPage {
            offset: 0,
            limit: SEARCH_PAGE,
        };
        loop {
            let versions = self.ports.artifacts.latest_versions(&store_query, page).await?;
            let read = versions.len() as u64;
            for version in versions {
                if caller.is_none() && version.visibility == Visibility::Private {
                    continue;
                }
                if let Some(found) = hit(&version).filter(|found| matches(found, &query)) {
                    hits.push(found.0);
                    if hits.len() == SEARCH_LIMIT {
                        return Ok(hits);
                    }
                }
            }
            if read < page.limit {
                return Ok(hits);
            }
            page.offset += read;
        }
    }
}

fn hit(version: &ArtifactVersion) -> Option<(SearchHit, Vec<String>)> {
    let manifest = ArtifactManifest::parse(&version.manifest).ok()?;
    Some((
        SearchHit {
            scope: version.identity.scope.as_str().to_owned(),
            name: version.identity.name.as_str().to_owned(),
            latest_version: version.identity.version.as_str().to_owned(),
            kind: version.kind,
            description: manifest.description.clone(),
            tags: manifest.tags.clone(),
            author: version.publisher.clone(),
        },
        manifest.hooks().to_vec(),
    ))
}

fn matches((hit, hooks): &(SearchHit, Vec<String>), query: &SearchQuery) -> bool {
    let text_ok = given(&query.q).is_none_or(|q| {
        let q = q.to_lowercase();
        [&hit.scope, &hit.name, &hit.description]
            .into_iter()
            .chain(hit.tags.iter())
            .any(|field| field.to_lowercase().contains(&q))
    });
    let hook_ok = given(&query.hook).is_none_or(|hook| hooks.contains(&hook));
    let tag_ok = given(&query.tag).is_none_or(|tag| hit.tags.contains(&tag));
    text_ok && hook_ok && tag_ok
}

/// A filter's value; an empty one filters nothing.
fn given(value: &Option<String>) -> Option<String> {
    value.as_deref().filter(|v| !v.is_empty()).map(str::to_owned)
}
