//! `GET /search`: one hit per package (its highest published version), filters AND-composed.

use std::collections::BTreeMap;

use svc_domain::artifact::{ArtifactKind, ArtifactManifest, ArtifactScope, ArtifactVersion, Visibility};

use super::{RegistryError, RegistryService};
use crate::ports::registry::{ArtifactQuery, Publisher};

/// Most hits one search answers.
pub const SEARCH_LIMIT: usize = 100;

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
        };
        let mut latest: BTreeMap<(String, String), ArtifactVersion> = BTreeMap::new();
        for version in self.ports.artifacts.search(&store_query).await? {
            if version.is_yanked() || (caller.is_none() && version.visibility == Visibility::Private) {
                continue;
            }
            let key = (
                version.identity.scope.as_str().to_owned(),
                version.identity.name.as_str().to_owned(),
            );
            let newer = latest
                .get(&key)
                .is_none_or(|known| version.identity.version.precedence(&known.identity.version).is_gt());
            if newer {
                latest.insert(key, version);
            }
        }
        Ok(latest
            .into_values()
            .filter_map(|version| hit(&version))
            .filter(|hit| matches(hit, &query))
            .map(|(hit, _)| hit)
            .take(SEARCH_LIMIT)
            .collect())
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
    let given = |value: &Option<String>| value.as_deref().filter(|v| !v.is_empty()).map(str::to_owned);
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
