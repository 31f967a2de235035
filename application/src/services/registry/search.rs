//! `GET /search`: one hit per package (its highest published version), filters AND-composed.

use std::future::Future;

use svc_domain::artifact::{ArtifactKind, ArtifactScope, Visibility};

use super::{RegistryError, RegistryService};
use crate::ports::registry::{ArtifactQuery, ListedVersion, PackageKey, Publisher, ResultPage};

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
        let exact_hit = |version: &ListedVersion| {
            if caller.is_none() && version.visibility == Visibility::Private {
                return None;
            }
            matches(version, &query).then(|| hit(version))
        };
        let artifacts = &self.ports.artifacts;
        Ok(gather(
            |page| artifacts.latest_versions(&store_query, page),
            exact_hit,
            SEARCH_LIMIT,
            SEARCH_PAGE,
        )
        .await?)
    }
}

/// The first `limit` hits among the store's latest versions, read `page_size` at a time. The store
/// narrows loosely, so pages are read until `limit` exact hits are found or the store runs out:
/// a search costs the packages it reads, not every version ever published.
async fn gather<E, Read, Reading>(
    mut read: Read,
    exact_hit: impl Fn(&ListedVersion) -> Option<SearchHit>,
    limit: usize,
    page_size: u64,
) -> Result<Vec<SearchHit>, E>
where
    Read: FnMut(ResultPage) -> Reading,
    Reading: Future<Output = Result<Vec<ListedVersion>, E>>,
{
    let mut hits = Vec::new();
    let mut after = None;
    loop {
        let versions = read(ResultPage {
            after: after.take(),
            limit: page_size,
        })
        .await?;
        let full = versions.len() as u64 >= page_size;
        after = versions.last().map(|version| PackageKey::of(&version.identity));
        for version in &versions {
            if let Some(found) = exact_hit(version) {
                hits.push(found);
                if hits.len() == limit {
                    return Ok(hits);
                }
            }
        }
        if !full {
            return Ok(hits);
        }
    }
}

/// The answer of one listed version: its listing columns, no manifest.
fn hit(version: &ListedVersion) -> SearchHit {
    SearchHit {
        scope: version.identity.scope.as_str().to_owned(),
        name: version.identity.name.as_str().to_owned(),
        latest_version: version.identity.version.as_str().to_owned(),
        kind: version.kind,
        description: version.description.clone(),
        tags: version.tags.clone(),
        author: version.publisher.clone(),
    }
}

fn matches(version: &ListedVersion, query: &SearchQuery) -> bool {
    let text_ok = given(&query.q).is_none_or(|q| {
        let q = q.to_lowercase();
        [
            version.identity.scope.as_str(),
            version.identity.name.as_str(),
            version.description.as_str(),
        ]
        .into_iter()
        .chain(version.tags.iter().map(String::as_str))
        .any(|field| field.to_lowercase().contains(&q))
    });
    let hook_ok = given(&query.hook).is_none_or(|hook| version.hooks.contains(&hook));
    let tag_ok = given(&query.tag).is_none_or(|tag| version.tags.contains(&tag));
    text_ok && hook_ok && tag_ok
}

/// A filter's value; an empty one filters nothing.
fn given(value: &Option<String>) -> Option<String> {
    value.as_deref().filter(|v| !v.is_empty()).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use svc_domain::artifact::ArtifactIdentity;

    use super::*;

    fn version(name: &str) -> ListedVersion {
        ListedVersion {
            identity: ArtifactIdentity::parse("@acme", name, "1.0.0").unwrap(),
            kind: ArtifactKind::Gadget,
            visibility: Visibility::Public,
            publisher: "acme".into(),
            description: String::new(),
            tags: Vec::new(),
            hooks: Vec::new(),
        }
    }

    fn name_hit(version: &ListedVersion) -> SearchHit {
        hit(version)
    }

    /// A store of `count` packages (`p000`, `p001`, ...) that pages by key, recording each page asked.
    struct Store {
        versions: Vec<ListedVersion>,
        asked: RefCell<Vec<ResultPage>>,
    }

    impl Store {
        fn of(count: usize) -> Self {
            Self {
                versions: (0..count).map(|i| version(&format!("p{i:03}"))).collect(),
                asked: RefCell::new(Vec::new()),
            }
        }

        async fn read(&self, page: ResultPage) -> Result<Vec<ListedVersion>, ()> {
            self.asked.borrow_mut().push(page.clone());
            Ok(self
                .versions
                .iter()
                .filter(|v| {
                    page.after
                        .as_ref()
                        .is_none_or(|after| v.identity.name.as_str() > after.name.as_str())
                })
                .take(page.limit as usize)
                .cloned()
                .collect())
        }
    }

    fn names(hits: &[SearchHit]) -> Vec<String> {
        hits.iter().map(|hit| hit.name.clone()).collect()
    }

    #[tokio::test]
    async fn pages_are_read_after_the_last_package_until_the_limit_is_filled() {
        let store = Store::of(50);
        // Every third package is a loose match the exact check refuses.
        let every_third_refused = |v: &ListedVersion| {
            let index: usize = v.identity.name.as_str()[1..].parse().unwrap();
            (index % 3 != 2).then(|| name_hit(v))
        };
        let hits = gather(|page| store.read(page), every_third_refused, 20, 8)
            .await
            .unwrap();
        let expected: Vec<String> = (0..50)
            .filter(|i| i % 3 != 2)
            .take(20)
            .map(|i| format!("p{i:03}"))
            .collect();
        assert_eq!(names(&hits), expected);
        // The 20th hit is p028, on the fourth page of eight: no fifth page was read.
        let asked: Vec<Option<String>> = store
            .asked
            .borrow()
            .iter()
            .map(|p| p.after.clone().map(|a| a.name))
            .collect();
        assert_eq!(
            asked,
            [None, Some("p007".into()), Some("p015".into()), Some("p023".into())]
        );
    }

    #[tokio::test]
    async fn a_short_page_ends_the_search() {
        for (packages, page_size) in [(0, 8), (7, 8), (8, 8), (17, 8)] {
            let store = Store::of(packages);
            let hits = gather(|page| store.read(page), |v| Some(name_hit(v)), 100, page_size)
                .await
                .unwrap();
            assert_eq!(hits.len(), packages, "{packages} packages, pages of {page_size}");
            // Full pages are followed by one more read; a short one is the last.
            assert_eq!(store.asked.borrow().len(), packages / page_size as usize + 1);
        }
    }
}
