//! Transport metadata of declared packages, as the mount uses it: which bundles a card loads
//! (`gadgetBundles` in the embedded bootstrap and the live channel's `ack`) and which origins the
//! mount's content-security policy must allow for them.
//!
//! Every transport URL is absolute: a relative `bundleUrl` would resolve against the card's own
//! document, which is the host's sandbox (often `about:srcdoc` or a host-chosen origin), never
//! this server. A manifest with one is refused at load ([`GadgetDescriptor::check_transport`]).

use serde::Serialize;
use url::Url;

use super::GadgetDescriptor;

/// What the mount needs to load one declared package before the component imports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GadgetBundle {
    pub package: String,
    pub url: String,
    /// `sha384-<base64>`; the mount refuses a bundle whose digest differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integrity: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub style_url: Option<String>,
}

impl GadgetDescriptor {
    /// The bundle the mount loads for this package; `None` when it declares no `bundleUrl`.
    pub fn bundle(&self) -> Option<GadgetBundle> {
        Some(GadgetBundle {
            package: self.package.clone(),
            url: self.bundle_url.clone()?,
            integrity: self.bundle_sri.clone(),
            style_url: self.style_url.clone(),
        })
    }

    /// Origins the mount loads resources from for this package: the stylesheet's. The bundle's
    /// origin is not one: the runtime fetches the bundle (connect-src), checks its integrity and
    /// runs it as an inline module script, so allowing its origin as a script source would only
    /// let a card load other scripts from there unchecked.
    pub fn resource_origins(&self) -> Vec<String> {
        self.style_url.iter().filter_map(|url| origin(url)).collect()
    }

    /// Origins the mount fetches from for this package: the bundle's (the runtime fetches it to
    /// check its integrity and rewrite its imports, so `connect-src` must allow it too) and the
    /// package's `connect` entries, which its code reaches at run time.
    pub fn connect_origins(&self) -> Vec<String> {
        self.bundle_url
            .iter()
            .chain(self.connect.iter().flatten())
            .filter_map(|url| origin(url))
            .collect()
    }

    /// Every transport URL is absolute: `bundleUrl` and `styleUrl` over http(s), `connect`
    /// entries over http(s) or ws(s); `bundleSri` is `sha384-<base64>`. The error names the field.
    pub fn check_transport(&self) -> Result<(), String> {
        let web = ["http", "https"];
        if let Some(url) = &self.bundle_url {
            absolute("bundleUrl", url, &web)?;
        }
        if let Some(url) = &self.style_url {
            absolute("styleUrl", url, &web)?;
        }
        for (index, url) in self.connect.iter().flatten().enumerate() {
            absolute(&format!("connect/{index}"), url, &["http", "https", "ws", "wss"])?;
        }
        if let Some(sri) = &self.bundle_sri
            && sri.strip_prefix("sha384-").is_none_or(|b64| b64.len() != 64)
        {
            return Err(format!("bundleSri: `{sri}` is not `sha384-<base64 of 48 bytes>`"));
        }
        Ok(())
    }
}

fn absolute(field: &str, url: &str, schemes: &[&str]) -> Result<(), String> {
    match Url::parse(url) {
        Ok(parsed) if schemes.contains(&parsed.scheme()) && parsed.host().is_some() => Ok(()),
        _ => Err(format!(
            "{field}: `{url}` must be an absolute {} URL (relative URLs would resolve against the host's sandbox, not this server)",
            schemes.join("/")
        )),
    }
}

/// `scheme://host[:port]` of an absolute URL.
fn origin(url: &str) -> Option<String> {
    let parsed = Url::parse(url).ok()?;
    let host = parsed.host_str()?;
    Some(match parsed.port() {
        Some(port) => format!("{}://{host}:{port}", parsed.scheme()),
        None => format!("{}://{host}", parsed.scheme()),
    })
}

/// The bundles a component may need: declared packages with a `bundleUrl` among the packages
/// its contract lets it import ([`crate::contract::Contract::importable_packages`]).
pub fn bundles_for(declared: &[GadgetDescriptor], importable: &[String]) -> Vec<GadgetBundle> {
    declared
        .iter()
        .filter(|descriptor| importable.contains(&descriptor.package))
        .filter_map(GadgetDescriptor::bundle)
        .collect()
}

/// The mount's `_meta.ui.csp` additions for `descriptors`: (resource origins, connect origins),
/// each deduplicated in first-seen order.
pub fn csp_origins<'a>(descriptors: impl IntoIterator<Item = &'a GadgetDescriptor>) -> (Vec<String>, Vec<String>) {
    let mut resources: Vec<String> = Vec::new();
    let mut connects: Vec<String> = Vec::new();
    for descriptor in descriptors {
        push_new(&mut resources, descriptor.resource_origins());
        push_new(&mut connects, descriptor.connect_origins());
    }
    (resources, connects)
}

fn push_new(into: &mut Vec<String>, origins: Vec<String>) {
    for origin in origins {
        if !into.contains(&origin) {
            into.push(origin);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn charts() -> GadgetDescriptor {
        let mut descriptor = GadgetDescriptor::new("@acme/charts", "2.1.0", vec![]);
        descriptor.bundle_url = Some("https://cdn.example.com/acme/charts.js".into());
        descriptor.bundle_sri = Some(format!("sha384-{}", "A".repeat(64)));
        descriptor.style_url = Some("https://styles.example.com:8443/charts.css".into());
        descriptor.connect = Some(vec![
            "wss://feed.example.com/live".into(),
            "https://api.example.com".into(),
        ]);
        descriptor
    }

    #[test]
    fn origins_come_from_the_bundle_the_stylesheet_and_connect() {
        let (resources, connects) = csp_origins([&charts(), &charts()]);
        // The bundle is fetched and run as an inline script: only the stylesheet is a resource.
        assert_eq!(resources, ["https://styles.example.com:8443"]);
        assert_eq!(
            connects,
            [
                "https://cdn.example.com",
                "wss://feed.example.com",
                "https://api.example.com"
            ]
        );
    }

    #[test]
    fn only_importable_packages_with_a_bundle_are_carried() {
        let bare = GadgetDescriptor::new("@acme/bare", "1.0.0", vec![]);
        let declared = [charts(), bare];
        let all = ["@acme/charts".to_owned(), "@acme/bare".to_owned()];
        let bundles = bundles_for(&declared, &all);
        assert_eq!(bundles.len(), 1);
        assert_eq!(bundles[0].url, "https://cdn.example.com/acme/charts.js");
        assert!(bundles_for(&declared, &["@svc/gadgets".to_owned()]).is_empty());
    }

    #[test]
    fn transport_urls_must_be_absolute() {
        assert_eq!(charts().check_transport(), Ok(()));
        type Break = fn(&mut GadgetDescriptor);
        let rows: [(&str, Break); 4] = [
            ("bundleUrl", |d| d.bundle_url = Some("/gadgets/charts.js".into())),
            ("styleUrl", |d| d.style_url = Some("charts.css".into())),
            ("connect/0", |d| d.connect = Some(vec!["ftp://x.example".into()])),
            ("bundleSri", |d| d.bundle_sri = Some("sha256-abc".into())),
        ];
        for (field, break_it) in rows {
            let mut descriptor = charts();
            break_it(&mut descriptor);
            let error = descriptor.check_transport().unwrap_err();
            assert!(error.starts_with(&format!("{field}: ")), "{field}: {error}");
        }
    }
}
